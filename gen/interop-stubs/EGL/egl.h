/* Generator stub of <EGL/egl.h>: the types NVIDIA's cudaEGL.h uses (see ../README.md). */
#ifndef CUDRV_STUB_EGL_H
#define CUDRV_STUB_EGL_H
#include <stdint.h>
typedef int32_t EGLint;
typedef void *EGLImage;
typedef void *EGLSync;
#endif

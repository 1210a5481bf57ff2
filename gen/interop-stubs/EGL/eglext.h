/* Generator stub of <EGL/eglext.h>: the types NVIDIA's cudaEGL.h uses (see ../README.md). */
#ifndef CUDRV_STUB_EGLEXT_H
#define CUDRV_STUB_EGLEXT_H
typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef void *EGLSyncKHR;
#endif

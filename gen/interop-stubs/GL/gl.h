/* Generator stub of <GL/gl.h>: the types NVIDIA's cudaGL.h uses (see ../README.md). */
#ifndef CUDRV_STUB_GL_H
#define CUDRV_STUB_GL_H
typedef unsigned int GLenum;
typedef unsigned int GLuint;
#endif

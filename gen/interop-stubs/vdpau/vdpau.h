/* Generator stub of <vdpau/vdpau.h>: the types NVIDIA's cudaVDPAU.h uses (see ../README.md). */
#ifndef CUDRV_STUB_VDPAU_H
#define CUDRV_STUB_VDPAU_H
#include <stdint.h>
typedef uint32_t VdpDevice;
typedef uint32_t VdpFuncId;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef int VdpStatus;
typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id, void **function_pointer);
#endif

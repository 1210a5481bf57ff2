/* cudrv's binding input: the driver API header and its entry-point typedefs. */
#include <cuda.h>
#include <cudaTypedefs.h>

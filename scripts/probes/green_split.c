// green_split.c: what cuDevSmResourceSplitByCount makes of device 0's SMs for every
// minCount 1..N, without and with CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING: one line
// "flags minCount status groups group_sms remaining_sms" each (groups asked: as many as fit).
// Build: gcc green_split.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda
#include <cuda.h>
#include <stdio.h>
int main(void) {
  CUdevice dev; CUdevResource all;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM)) return 1;
  printf("# %u SMs, minSmPartitionSize %u, smCoscheduledAlignment %u\n", all.sm.smCount,
         all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment);
  static CUdevResource groups[256];
  for (unsigned flags = 0; flags <= 1; flags++) {
    for (unsigned min = 1; min <= all.sm.smCount + 1; min++) {
      unsigned n = 0;
      CUresult q = cuDevSmResourceSplitByCount(NULL, &n, &all, NULL, flags, min);
      unsigned asked = n ? n : 1;
      CUdevResource rest = {0};
      CUresult r = cuDevSmResourceSplitByCount(groups, &asked, &all, &rest, flags, min);
      printf("%u %u %d %u %u %u %d %u\n", flags, min, q, n, r ? 0 : groups[0].sm.smCount, r ? 0 : rest.sm.smCount, r, asked);
    }
  }
  return 0;
}

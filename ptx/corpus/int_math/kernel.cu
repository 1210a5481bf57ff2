extern "C" __global__ void int_math(const int* a, const int* b, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i] | 1;
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    int* o = out + i * 16;
    o[0] = x / y; o[1] = x % y; o[2] = (int)(ux / uy); o[3] = (int)(ux % uy);
    o[4] = __mulhi(x, y); o[5] = (int)__umulhi(ux, uy); o[6] = __popc(ux); o[7] = __clz(x);
    o[8] = (int)__brev(ux); o[9] = (int)__funnelshift_l(ux, uy, y & 31); o[10] = (int)__byte_perm(ux, uy, 0x5140);
    o[11] = max(x, y) - min(x, y) + abs(x >> 3); o[12] = (int)__sad(x, y, 7u); o[13] = __dp4a(x, y, 3);
    o[14] = __ffs(x) + __ffsll((long long)x * y); o[15] = (int)((long long)x * y >> 17) ^ (x << (y & 15));
}

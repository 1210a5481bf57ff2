extern "C" __global__ void warp_vote(const int* in, unsigned* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[t];
    unsigned* o = out + t * 8;
    o[0] = __ballot_sync(0xffffffffu, v > 0);
    o[1] = __all_sync(0xffffffffu, v > -1000000000);
    o[2] = __any_sync(0xffffffffu, v > 2000000000);
    if (v & 1) {
        o[3] = __activemask();
        o[4] = __ballot_sync(__activemask(), v > 0);
    } else {
        o[3] = __activemask() ^ 1;
        o[4] = 7;
    }
    o[5] = __match_any_sync(0xffffffffu, v & 3);
    o[6] = __reduce_add_sync(0xffffffffu, (unsigned)v & 0xff);
    o[7] = __reduce_max_sync(0xffffffffu, (unsigned)v & 0xffff) + __reduce_or_sync(0xffffffffu, (unsigned)v & 0xf0);
}

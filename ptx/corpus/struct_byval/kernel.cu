struct Params { float scale; int offset; double bias; short tag; char flag; float v[3]; };
extern "C" __global__ void struct_byval(Params p, const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i] * p.scale + (float)p.offset + (float)p.bias + p.v[i % 3];
    out[i] = p.flag ? x + (float)p.tag : -x;
}

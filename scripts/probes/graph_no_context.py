# graph_no_context.py PTX OP: calls OP (a graph call; see graph_no_context.sh) with no context
# current, after making what it needs with the context current; prints "OP -> status".
import ctypes, sys
c = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r: print(what, "failed", r, flush=True)
ck(c.cuInit(0), "init")
dev = ctypes.c_int(); ck(c.cuDeviceGet(ctypes.byref(dev), 0), "dev")
ctx = ctypes.c_void_p(); ck(c.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
ck(c.cuCtxPushCurrent_v2(ctx), "push")
ptx = open(sys.argv[1], "rb").read() + b"\0"
mod = ctypes.c_void_p(); ck(c.cuModuleLoadData(ctypes.byref(mod), ptx), "load")
f = ctypes.c_void_p(); ck(c.cuModuleGetFunction(ctypes.byref(f), mod, b"add_f32"), "getfunction")
buf = ctypes.c_uint64(); ck(c.cuMemAlloc_v2(ctypes.byref(buf), 4096), "alloc")
class P(ctypes.Structure):
    _fields_ = [("func", ctypes.c_void_p)] + [(n, ctypes.c_uint) for n in "gx gy gz bx by bz shm".split()] + [("kp", ctypes.c_void_p), ("extra", ctypes.c_void_p), ("kern", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]
a = ctypes.c_float(1.0); n = ctypes.c_int(1024)
args = (ctypes.c_void_p * 3)(ctypes.cast(ctypes.byref(buf), ctypes.c_void_p), ctypes.cast(ctypes.byref(a), ctypes.c_void_p), ctypes.cast(ctypes.byref(n), ctypes.c_void_p))
p = P(f, 4, 1, 1, 256, 1, 1, 0, ctypes.cast(args, ctypes.c_void_p), None, None, None)
g = ctypes.c_void_p(); ck(c.cuGraphCreate(ctypes.byref(g), 0), "graphcreate")
node = ctypes.c_void_p(); ck(c.cuGraphAddKernelNode_v2(ctypes.byref(node), g, None, 0, ctypes.byref(p)), "addkernel (current)")
ex = ctypes.c_void_p(); ck(c.cuGraphInstantiateWithFlags(ctypes.byref(ex), g, 0), "instantiate")
s = ctypes.c_void_p(); ck(c.cuStreamCreate(ctypes.byref(s), 1), "stream")
op = sys.argv[2]
old = ctypes.c_void_p(); ck(c.cuCtxPopCurrent_v2(ctypes.byref(old)), "pop")
if op == "add": r = c.cuGraphAddKernelNode_v2(ctypes.byref(node), g, None, 0, ctypes.byref(p))
elif op == "set": r = c.cuGraphKernelNodeSetParams_v2(node, ctypes.byref(p))
elif op == "get":
    q = P(); r = c.cuGraphKernelNodeGetParams_v2(node, ctypes.byref(q))
elif op == "execset": r = c.cuGraphExecKernelNodeSetParams_v2(ex, node, ctypes.byref(p))
elif op == "instantiate": r = c.cuGraphInstantiateWithFlags(ctypes.byref(ex), g, 0)
elif op == "launch": r = c.cuGraphLaunch(ex, s)
elif op == "upload": r = c.cuGraphUpload(ex, s)
elif op == "clone":
    g2 = ctypes.c_void_p(); r = c.cuGraphClone(ctypes.byref(g2), g)
elif op == "update":
    info = (ctypes.c_byte * 64)(); r = c.cuGraphExecUpdate_v2(ex, g, ctypes.byref(info))
elif op == "addhost":
    CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p); cb = CB(lambda u: None)
    class H(ctypes.Structure): _fields_ = [("fn", ctypes.c_void_p), ("ud", ctypes.c_void_p)]
    h = H(ctypes.cast(cb, ctypes.c_void_p), None); r = c.cuGraphAddHostNode(ctypes.byref(node), g, None, 0, ctypes.byref(h))
elif op == "addempty": r = c.cuGraphAddEmptyNode(ctypes.byref(node), g, None, 0)
elif op == "destroyexec": r = c.cuGraphExecDestroy(ex)
elif op == "destroy": r = c.cuGraphDestroy(g)
print(op, "->", r, flush=True)

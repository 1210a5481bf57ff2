//! The driver does not synchronise a graph: no two calls on one graph hierarchy may
//! overlap, reads included. These tests load the stand-in through a `cuGetProcAddress`
//! shim that wraps a set of graph calls: each wrapped call holds one flag for a moment and
//! counts the calls that found it held. Raw calls from two threads overlap (the shim
//! sees it); cudrv's calls on one graph from several threads never do.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::OnceLock;
use std::time::Duration;

use cudrv::sys::{cuuint64_t, CUgraph, CUgraphExec, CUgraphNode, CUgraphNodeType, CUresult};
use cudrv::table::{Call, Entry, VariantSpec, VARIANTS};
use cudrv::{Driver, GetProcAddress, GetProcAddressV2, Graph, LoadOptions, ProcAddressQuery};

static IN_FLIGHT: AtomicBool = AtomicBool::new(false);
static CALLS: AtomicUsize = AtomicUsize::new(0);
static OVERLAPS: AtomicUsize = AtomicUsize::new(0);

/// Marks a wrapped call in flight for a moment; counts it as an overlap if another was.
fn in_flight<R>(call: impl FnOnce() -> R) -> R {
    let overlapped = IN_FLIGHT.swap(true, SeqCst);
    CALLS.fetch_add(1, SeqCst);
    if overlapped {
        OVERLAPS.fetch_add(1, SeqCst);
    }
    std::thread::sleep(Duration::from_micros(300));
    let r = call();
    if !overlapped {
        IN_FLIGHT.store(false, SeqCst);
    }
    r
}

/// A wrapper for one variant (named by its `cudrv::call` constant): the stand-in's
/// function is kept in `$real`.
macro_rules! shims {
    ($($call:ident => $shim:ident, $real:ident: fn($($a:ident: $t:ty),*);)*) => {
        $(
            static $real: AtomicUsize = AtomicUsize::new(0);
            unsafe extern "C" fn $shim($($a: $t),*) -> CUresult {
                // SAFETY: `$real` holds the stand-in's function of this exact signature,
                // stored before this wrapper was handed out.
                let real: unsafe extern "C" fn($($t),*) -> CUresult = unsafe { std::mem::transmute($real.load(SeqCst)) };
                // SAFETY: the caller's arguments, passed on unchanged.
                in_flight(|| unsafe { real($($a),*) })
            }
        )*
        /// The wrapped variants: (the variant, where the real function goes, the wrapper).
        fn shims() -> Vec<(&'static VariantSpec, &'static AtomicUsize, *mut c_void)> {
            vec![$((variant(cudrv::call::$call), &$real, $shim as *mut c_void)),*]
        }
    };
}

shims! {
    cuGraphGetNodes_v10000 => get_nodes, GET_NODES: fn(g: CUgraph, nodes: *mut CUgraphNode, n: *mut usize);
    cuGraphGetRootNodes_v10000 => get_root_nodes, GET_ROOT_NODES: fn(g: CUgraph, nodes: *mut CUgraphNode, n: *mut usize);
    cuGraphAddEmptyNode_v10000 => add_empty_node, ADD_EMPTY_NODE:
        fn(node: *mut CUgraphNode, g: CUgraph, deps: *const CUgraphNode, n: usize);
    cuGraphAddChildGraphNode_v10000 => add_child_graph_node, ADD_CHILD_GRAPH_NODE:
        fn(node: *mut CUgraphNode, g: CUgraph, deps: *const CUgraphNode, n: usize, child: CUgraph);
    cuGraphChildGraphNodeGetGraph_v10000 => child_graph, CHILD_GRAPH: fn(node: CUgraphNode, g: *mut CUgraph);
    cuGraphNodeGetType_v10000 => node_type, NODE_TYPE: fn(node: CUgraphNode, t: *mut CUgraphNodeType);
    cuGraphInstantiateWithFlags_v11040 => instantiate, INSTANTIATE: fn(exec: *mut CUgraphExec, g: CUgraph, flags: u64);
    cuGraphClone_v10000 => clone_graph, CLONE_GRAPH: fn(copy: *mut CUgraph, g: CUgraph);
}

/// The table's description of the variant `call` names.
fn variant(call: Call) -> &'static VariantSpec {
    match call.entry() {
        Entry::Variant(i) => &VARIANTS[i],
        other => panic!("{call} is not a variant: {other:?}"),
    }
}

static STANDIN_GPA: OnceLock<GetProcAddressV2> = OnceLock::new();

/// The stand-in's `cuGetProcAddress_v2`, with the wrapped variants swapped for the shims.
unsafe extern "C" fn shim_gpa(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: cuuint64_t,
    status: *mut ProcAddressQuery,
) -> CUresult {
    let Some(real) = STANDIN_GPA.get() else { return CUresult::CUDA_ERROR_NOT_INITIALIZED };
    // SAFETY: the caller's arguments, passed on unchanged.
    let r = unsafe { real(symbol, pfn, version, flags, status) };
    // SAFETY: on success the driver wrote a function to `*pfn`; `symbol` is NUL-terminated.
    unsafe {
        if r == CUresult::CUDA_SUCCESS && !(*pfn).is_null() {
            let name = CStr::from_ptr(symbol);
            let wanted = |v: &VariantSpec| v.symbol == name && i64::from(v.version) == i64::from(version);
            if let Some((_, slot, shim)) = shims().into_iter().find(|(v, ..)| wanted(v)) {
                slot.store(*pfn as usize, SeqCst);
                *pfn = shim;
            }
        }
    }
    r
}

fn driver() -> &'static Driver {
    static DRIVER: OnceLock<&'static Driver> = OnceLock::new();
    DRIVER.get_or_init(|| {
        let standin = cudrv_standin::StandIn::new(cudrv::table::HEADER_VERSION).unwrap();
        let GetProcAddress::V2(real) = standin.get_proc_address() else { panic!("a 13.5 stand-in has the v2 entry") };
        STANDIN_GPA.set(real).unwrap();
        // SAFETY: the shim returns the stand-in's functions, or wrappers of the same
        // signatures; all live as long as the process.
        let d = unsafe { Driver::from_get_proc_address(GetProcAddress::V2(shim_gpa), LoadOptions::default()) }.unwrap();
        let d: &'static Driver = Box::leak(Box::new(d));
        // SAFETY: plain call.
        assert_eq!(unsafe { d.p().cuInit(0) }, CUresult::CUDA_SUCCESS);
        d
    })
}

fn reset() -> (usize, usize) {
    (CALLS.swap(0, SeqCst), OVERLAPS.swap(0, SeqCst))
}

#[test]
fn calls_on_one_graph_from_many_threads_never_overlap() {
    let ctx = driver().device(0).unwrap().primary_context().unwrap();
    let graph = Graph::new(&ctx).unwrap();
    let first = graph.add_empty_node(&[]).unwrap();
    let child = Graph::new(&ctx).unwrap();
    child.add_empty_node(&[]).unwrap();
    let child_node = graph.add_child_graph_node(&[&first], &child).unwrap();

    // The shim can see an overlap: the same reads, raw, from two threads at once.
    let (p, raw) = (driver().p(), graph.as_raw() as usize);
    reset();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..20 {
                    let mut n = 0usize;
                    // SAFETY: a live graph; a null array asks for the count.
                    assert_eq!(
                        unsafe { p.cuGraphGetNodes(raw as CUgraph, std::ptr::null_mut(), &mut n) },
                        CUresult::CUDA_SUCCESS
                    );
                }
            });
        }
    });
    let (calls, overlaps) = reset();
    assert_eq!(calls, 40);
    assert!(overlaps > 0, "two threads' raw calls overlapped: the shim must see it");

    // cudrv's calls on the graph, its nodes and the graph inside its child node.
    let rounds = 15;
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..rounds {
                graph.add_empty_node(&[&first]).unwrap();
                graph.add_child_graph_node(&[], &child).unwrap();
            }
        });
        s.spawn(|| {
            for _ in 0..rounds {
                assert!(!graph.nodes().unwrap().is_empty());
                assert!(!graph.root_nodes().unwrap().is_empty());
            }
        });
        s.spawn(|| {
            for _ in 0..rounds {
                assert_eq!(child_node.node_type().unwrap(), cudrv::GraphNodeType::Graph);
                let inner = child_node.child_graph().unwrap();
                assert_eq!(inner.nodes().unwrap().len(), 1);
            }
        });
        s.spawn(|| {
            for _ in 0..rounds {
                drop(graph.instantiate().unwrap());
                drop(graph.try_clone().unwrap());
            }
        });
    });
    let (calls, overlaps) = reset();
    assert!(calls >= rounds * 9, "every wrapped call went through the shim ({calls})");
    assert_eq!(overlaps, 0, "cudrv serialises the calls on one graph hierarchy");
    assert_eq!(graph.nodes().unwrap().len(), 2 + 2 * rounds);

    // A call on two graphs locks both, in one order whichever is the argument: `a` into
    // `b` and `b` into `a` at once neither deadlock nor overlap.
    let (a, b) = (Graph::new(&ctx).unwrap(), Graph::new(&ctx).unwrap());
    reset();
    std::thread::scope(|s| {
        for (parent, child) in [(&a, &b), (&b, &a)] {
            s.spawn(move || {
                for _ in 0..rounds {
                    parent.add_child_graph_node(&[], child).unwrap();
                }
            });
        }
    });
    let (calls, overlaps) = reset();
    assert_eq!((calls, overlaps), (2 * rounds, 0));
}

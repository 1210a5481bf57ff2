//! Explicitly built graphs through cudrv's safe layer, on the stand-in: memcpy, kernel,
//! memset, host, event, child graph and conditional nodes; edges and introspection;
//! instantiation, whole-graph and per-node updates (with the refusal explained), clone
//! and DOT output; what a graph keeps alive.

mod common;
#[path = "../examples/common/graph_kernels.rs"]
#[allow(dead_code)]
mod graph_kernels;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::standin_driver;
use cudrv::sys::CUresult;
use cudrv::{
    ConditionalKind, Context, CopyEnd, DeviceBuffer, Error, Event, Graph, GraphExec, GraphNodeType, InstantiateFlags,
    LaunchConfig, Module, Stream,
};

const PTX: &str = include_str!("../examples/kernels/graph_kernels.ptx");
const N: usize = 1000;

fn context() -> Context {
    // The kernels' host versions: the stand-in's PTX executor cannot run `count_down`.
    graph_kernels::register();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

#[test]
fn memcpy_kernel_and_host_nodes_run_in_edge_order_and_update() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let add = Module::from_ptx(&ctx, PTX).unwrap().function("add_f32").unwrap();
    let input: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let src = DeviceBuffer::from_slice(&ctx, &input).unwrap();
    let x = DeviceBuffer::from_slice(&ctx, &vec![0.0f32; N]).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    let copy = graph.add_memcpy_node(&[], CopyEnd::buffer(&x), CopyEnd::buffer(&src)).unwrap();
    let (one, n) = (1.0f32, N as i32);
    let mut params = graph.kernel_params(&add);
    params.arg(&x).arg(&one).arg(&n);
    let config = LaunchConfig::for_num_elems(N as u32);
    // SAFETY: add_f32(float*, float, int); `x` is kept alive by the graph.
    let kernel = unsafe { graph.add_kernel_node(&[&copy], &params, config) }.unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let host = graph
        .add_host_node(&[&kernel], move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();

    // Introspection.
    let nodes = graph.nodes().unwrap();
    assert_eq!(nodes.len(), 3);
    let types: Vec<GraphNodeType> = nodes.iter().map(|n| n.node_type().unwrap()).collect();
    assert_eq!(types, [GraphNodeType::Memcpy, GraphNodeType::Kernel, GraphNodeType::Host]);
    assert_eq!(graph.root_nodes().unwrap().iter().map(|n| n.as_raw()).collect::<Vec<_>>(), [copy.as_raw()]);
    let edges: Vec<_> = graph.edges().unwrap().iter().map(|(a, b)| (a.as_raw(), b.as_raw())).collect();
    assert_eq!(edges, [(copy.as_raw(), kernel.as_raw()), (kernel.as_raw(), host.as_raw())]);
    assert_eq!(kernel.dependencies().unwrap()[0].as_raw(), copy.as_raw());
    assert_eq!(kernel.dependents().unwrap()[0].as_raw(), host.as_raw());
    let info = kernel.kernel_info().unwrap();
    assert_eq!((info.function, info.config), (add.as_raw(), config));

    let mut exec = graph.instantiate_with(InstantiateFlags::UPLOAD).unwrap();
    exec.upload(&stream).unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), input.iter().map(|v| v + 1.0).collect::<Vec<_>>());
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // A per-node update: the kernel adds 5.
    let five = 5.0f32;
    let mut params = graph.kernel_params(&add);
    params.arg(&x).arg(&five).arg(&n);
    // SAFETY: as above.
    unsafe { exec.set_kernel_node_params(&kernel, &params, config) }.unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), input.iter().map(|v| v + 5.0).collect::<Vec<_>>());

    // A wrong argument count is refused before the driver is called.
    let mut wrong = graph.kernel_params(&add);
    wrong.arg(&x).arg(&five);
    // SAFETY: refused before any driver call.
    let e = unsafe { exec.set_kernel_node_params(&kernel, &wrong, config) }.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)) && e.to_string().contains("expected 3 parameters, got 2"), "{e}");

    // Disabling the kernel: the launch only copies.
    exec.set_node_enabled(&kernel, false).unwrap();
    assert!(!exec.node_enabled(&kernel).unwrap());
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), input);
    exec.set_node_enabled(&kernel, true).unwrap();

    // A whole-graph update from a graph of the same shape (here: the graph itself, its
    // kernel node now adding 2).
    let two = 2.0f32;
    let mut params = graph.kernel_params(&add);
    params.arg(&x).arg(&two).arg(&n);
    // SAFETY: as above.
    unsafe { kernel.set_kernel_params(&params, config) }.unwrap();
    exec.update(&graph).unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), input.iter().map(|v| v + 2.0).collect::<Vec<_>>());
    assert_eq!(runs.load(Ordering::SeqCst), 4);

    // A changed topology is refused, and the error says so and names the node.
    let extra = graph.add_empty_node(&[&host]).unwrap();
    let e = exec.update(&graph).unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE));
    assert!(e.to_string().contains("topology changed"), "{e}");
    graph.remove_edges(&[(&host, &extra)]).unwrap();
    assert_eq!(graph.edges().unwrap().len(), 2);
    assert_eq!(graph.root_nodes().unwrap().len(), 2);
}

#[test]
fn each_exec_keeps_the_memory_of_its_kernel_node_updates() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let add = Module::from_ptx(&ctx, PTX).unwrap().function("add_f32").unwrap();
    let x = DeviceBuffer::from_slice(&ctx, &vec![0.0f32; N]).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    let (one, n) = (1.0f32, N as i32);
    let mut params = graph.kernel_params(&add);
    params.arg(&x).arg(&one).arg(&n);
    let config = LaunchConfig::for_num_elems(N as u32);
    // SAFETY: add_f32(float*, float, int).
    let kernel = unsafe { graph.add_kernel_node(&[], &params, config) }.unwrap();
    let (mut a, mut b) = (graph.instantiate().unwrap(), graph.instantiate().unwrap());

    // Both execs take the same parameters on a buffer only they use: `a` twice (the
    // second time it holds the memory already), then `b`, which must keep it too.
    let y = DeviceBuffer::from_slice(&ctx, &vec![10.0f32; N]).unwrap();
    let mut on_y = graph.kernel_params(&add);
    on_y.arg(&y).arg(&one).arg(&n);
    // SAFETY: as above.
    let set = |exec: &mut GraphExec| unsafe { exec.set_kernel_node_params(&kernel, &on_y, config) }.unwrap();
    set(&mut a);
    set(&mut a);
    set(&mut b);
    let raw_y = y.as_raw();
    drop(on_y);
    drop(y);
    ctx.set_current().unwrap();
    let p = ctx.driver().p();
    let read = || {
        let mut host = vec![0.0f32; N];
        // SAFETY: `raw_y` holds N floats while an exec keeps it; a valid host buffer.
        let r = unsafe { p.cuMemcpyDtoH(host.as_mut_ptr().cast(), raw_y, N * 4) };
        (r, host.first().copied())
    };
    a.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(read(), (CUresult::CUDA_SUCCESS, Some(11.0)));
    drop(a);
    b.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(read(), (CUresult::CUDA_SUCCESS, Some(12.0)), "kept by `b` after `a` is gone");
    drop(b);
    let (mut base, mut size) = (0, 0);
    // SAFETY: valid out-pointers.
    let r = unsafe { p.cuMemGetAddressRange(&mut base, &mut size, raw_y) };
    assert_eq!(r, CUresult::CUDA_ERROR_NOT_FOUND, "freed with the last exec that used it");
}

#[test]
fn node_type_change_is_refused_by_update() {
    let ctx = context();
    let a = Graph::new(&ctx).unwrap();
    a.add_empty_node(&[]).unwrap();
    let mut exec = a.instantiate().unwrap();
    let b = Graph::new(&ctx).unwrap();
    b.add_host_node(&[], || {}).unwrap();
    let e = exec.update(&b).unwrap_err();
    assert!(e.to_string().contains("node type changed"), "{e}");
}

#[test]
fn memset_event_child_clone_and_dot() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let x = DeviceBuffer::from_slice(&ctx, &vec![0u32; 64]).unwrap();
    let child = Graph::new(&ctx).unwrap();
    let set = child.add_memset_node(&[], &x, 7).unwrap();
    let info = set.memset_info().unwrap();
    assert_eq!((info.dst, info.value, info.element_size, info.width), (x.as_raw(), 7, 4, 64));
    let graph = Graph::new(&ctx).unwrap();
    let node = graph.add_child_graph_node(&[], &child).unwrap();
    assert_eq!(node.node_type().unwrap(), GraphNodeType::Graph);
    assert_eq!(node.child_graph().unwrap().nodes().unwrap().len(), 1);
    let done = Arc::new(Event::new(&ctx, 0).unwrap());
    let rec = graph.add_event_record_node(&[&node], &done).unwrap();
    assert_eq!(rec.node_type().unwrap(), GraphNodeType::EventRecord);
    let copy = graph.try_clone().unwrap();
    assert_eq!(copy.nodes().unwrap().len(), 2);
    assert_eq!(copy.find_in_clone(&node).unwrap().node_type().unwrap(), GraphNodeType::Graph);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.dot");
    graph.debug_dot(&path).unwrap();
    assert!(std::fs::read_to_string(&path).unwrap().starts_with("digraph"));
    drop((child, graph));
    let mut exec = copy.instantiate().unwrap();
    drop(copy);
    exec.launch(&stream).unwrap();
    done.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![7; 64]);
}

#[test]
fn a_while_node_runs_its_body_until_the_kernel_clears_the_condition() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::from_ptx(&ctx, PTX).unwrap();
    let (add, count_down) = (module.function("add_f32").unwrap(), module.function("count_down").unwrap());
    let x = DeviceBuffer::from_slice(&ctx, &vec![0.0f32; N]).unwrap();
    let counter = DeviceBuffer::from_slice(&ctx, &[0u32]).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    let reset = graph.add_memset_node(&[], &counter, 5).unwrap();
    let condition = graph.conditional_handle(Some(1)).unwrap();
    let (node, bodies) = graph.add_conditional_node(&[&reset], condition, ConditionalKind::While).unwrap();
    assert_eq!(node.node_type().unwrap(), GraphNodeType::Conditional);
    assert_eq!(bodies.len(), 1);
    let body = &bodies[0];
    let (one, n) = (1.0f32, N as i32);
    let mut p = body.kernel_params(&add);
    p.arg(&x).arg(&one).arg(&n);
    // SAFETY: add_f32(float*, float, int), count_down(unsigned*, u64 handle).
    let step = unsafe { body.add_kernel_node(&[], &p, LaunchConfig::for_num_elems(N as u32)) }.unwrap();
    let mut q = body.kernel_params(&count_down);
    q.arg(&counter).arg(&condition.0);
    // SAFETY: as above.
    unsafe { body.add_kernel_node(&[&step], &q, LaunchConfig::new((1, 1, 1), (1, 1, 1))) }.unwrap();
    drop(bodies);
    let mut exec = graph.instantiate().unwrap();
    for _ in 0..2 {
        exec.launch(&stream).unwrap();
    }
    stream.synchronize().unwrap();
    assert_eq!(counter.to_vec().unwrap(), [0]);
    assert_eq!(x.to_vec().unwrap(), vec![10.0; N]);
}

#[test]
fn nodes_of_another_graph_are_refused() {
    let ctx = context();
    let (a, b) = (Graph::new(&ctx).unwrap(), Graph::new(&ctx).unwrap());
    let n = a.add_empty_node(&[]).unwrap();
    let e = b.add_empty_node(&[&n]).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
}

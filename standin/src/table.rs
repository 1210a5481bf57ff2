//! The one place listing the variants the stand-in implements.
//!
//! `generated/entries.rs` (module `entries`) has one C entry point per variant of cudrv's
//! table, with its exact signature; each reads its field of [`TABLE`] at compile time. A field set here
//! makes the entry run the prologue its [`Gate`](crate::entry::Gate) names (fault injection,
//! shutdown, callbacks, `cuInit`; see [`crate::entry::enter`]), then call the function (a
//! direct call); a field left `None` makes it answer `CUDA_ERROR_NOT_SUPPORTED` (after an
//! injected fault, shutdown or a callback). Each function is type-checked against its
//! variant's C signature. When a name is implemented, every variant it may bind must be
//! (a test checks it), usually with the same function.
//!
//! `cuDriverGetVersion` and `cuGetProcAddress` answer as the world of the entry's slot.

use crate::entries::Table;
use crate::entry::{always, before_init, imp};
use crate::{
    capture_api, context_api, coop, copy, copy_any, ctx_query, device, entry, errors, event, func_attr, global, gpa,
    graph, graph_add, graph_clone, graph_cond, graph_edges, graph_exec, graph_params, graph_update, host_memory,
    host_register, ipc, launch, linker, memory_api, module, occupancy, pci, peer, pointer, pool, pool_attr, primary,
    stream, stream_query, user_object, vmm,
};

/// The implemented variants; every other field is `None`.
pub(crate) const TABLE: Table = Table {
    // Entries a real driver answers before cuInit (and, but for cuInit, inside callbacks
    // and after shutdown): see `Gate`.
    cuInit_v2000: before_init(entry::cu_init),
    cuGetErrorName_v6000: always(errors::cu_get_error_name),
    cuGetErrorString_v6000: always(errors::cu_get_error_string),
    cuDriverGetVersion_v2020: always(gpa::driver_get_version_entry),
    cuGetProcAddress_v11030: always(gpa::get_proc_address_entry),
    cuGetProcAddress_v12000: always(gpa::get_proc_address_v2_entry),
    // device.rs
    cuDeviceGetCount_v2000: imp(device::cu_device_get_count),
    cuDeviceGet_v2000: imp(device::cu_device_get),
    cuDeviceGetName_v2000: imp(device::cu_device_get_name),
    cuDeviceTotalMem_v3020: imp(device::cu_device_total_mem),
    cuDeviceGetAttribute_v2000: imp(device::cu_device_get_attribute),
    cuDeviceGetUuid_v9020: imp(device::cu_device_get_uuid),
    cuDeviceGetUuid_v11040: imp(device::cu_device_get_uuid),
    // primary.rs
    cuDevicePrimaryCtxGetState_v7000: imp(primary::cu_device_primary_ctx_get_state),
    cuDevicePrimaryCtxSetFlags_v7000: imp(primary::cu_device_primary_ctx_set_flags),
    cuDevicePrimaryCtxSetFlags_v11000: imp(primary::cu_device_primary_ctx_set_flags),
    cuDevicePrimaryCtxRetain_v7000: imp(primary::cu_device_primary_ctx_retain),
    cuDevicePrimaryCtxRelease_v7000: imp(primary::cu_device_primary_ctx_release),
    cuDevicePrimaryCtxRelease_v11000: imp(primary::cu_device_primary_ctx_release),
    cuDevicePrimaryCtxReset_v7000: imp(primary::cu_device_primary_ctx_reset),
    cuDevicePrimaryCtxReset_v11000: imp(primary::cu_device_primary_ctx_reset),
    // context_api.rs
    cuCtxCreate_v2000: imp(context_api::cu_ctx_create),
    cuCtxCreate_v3020: imp(context_api::cu_ctx_create),
    cuCtxCreate_v11040: imp(context_api::cu_ctx_create_v11040),
    cuCtxCreate_v12050: imp(context_api::cu_ctx_create_v12050),
    cuCtxDestroy_v2000: imp(context_api::cu_ctx_destroy),
    cuCtxDestroy_v4000: imp(context_api::cu_ctx_destroy),
    cuCtxPushCurrent_v2000: imp(context_api::cu_ctx_push_current),
    cuCtxPushCurrent_v4000: imp(context_api::cu_ctx_push_current),
    cuCtxPopCurrent_v2000: imp(context_api::cu_ctx_pop_current),
    cuCtxPopCurrent_v4000: imp(context_api::cu_ctx_pop_current),
    cuCtxSetCurrent_v4000: imp(context_api::cu_ctx_set_current),
    cuCtxGetCurrent_v4000: imp(context_api::cu_ctx_get_current),
    cuCtxGetDevice_v2000: imp(context_api::cu_ctx_get_device),
    cuCtxGetDevice_v13000: imp(context_api::cu_ctx_get_device_v13000),
    cuCtxSynchronize_v2000: imp(context_api::cu_ctx_synchronize),
    cuCtxSynchronize_v13000: imp(context_api::cu_ctx_synchronize_v13000),
    // ctx_query.rs
    cuCtxGetApiVersion_v3020: imp(ctx_query::cu_ctx_get_api_version),
    cuCtxGetFlags_v7000: imp(ctx_query::cu_ctx_get_flags),
    cuCtxGetLimit_v3010: imp(ctx_query::cu_ctx_get_limit),
    cuCtxSetLimit_v3010: imp(ctx_query::cu_ctx_set_limit),
    cuCtxGetStreamPriorityRange_v5050: imp(ctx_query::cu_ctx_get_stream_priority_range),
    // stream.rs
    cuStreamCreate_v2000: imp(stream::cu_stream_create),
    cuStreamCreateWithPriority_v5050: imp(stream::cu_stream_create_with_priority),
    cuStreamDestroy_v2000: imp(stream::cu_stream_destroy),
    cuStreamDestroy_v4000: imp(stream::cu_stream_destroy),
    cuStreamSynchronize_v2000: imp(stream::cu_stream_synchronize),
    cuStreamSynchronize_v7000_ptsz: imp(stream::cu_stream_synchronize),
    cuStreamQuery_v2000: imp(stream::cu_stream_query),
    cuStreamQuery_v7000_ptsz: imp(stream::cu_stream_query),
    cuStreamGetCtx_v9020: imp(stream::cu_stream_get_ctx),
    cuStreamGetCtx_v9020_ptsz: imp(stream::cu_stream_get_ctx),
    cuStreamGetCtx_v12050: imp(stream::cu_stream_get_ctx_v12050),
    cuStreamGetCtx_v12050_ptsz: imp(stream::cu_stream_get_ctx_v12050),
    cuLaunchHostFunc_v10000: imp(stream::cu_launch_host_func),
    cuLaunchHostFunc_v10000_ptsz: imp(stream::cu_launch_host_func),
    cuLaunchHostFunc_v13010: imp(stream::cu_launch_host_func_v13010),
    cuLaunchHostFunc_v13010_ptsz: imp(stream::cu_launch_host_func_v13010),
    cuStreamAddCallback_v5000: imp(stream::cu_stream_add_callback),
    cuStreamAddCallback_v7000_ptsz: imp(stream::cu_stream_add_callback),
    // stream_query.rs
    cuStreamGetFlags_v5050: imp(stream_query::cu_stream_get_flags),
    cuStreamGetFlags_v7000_ptsz: imp(stream_query::cu_stream_get_flags),
    cuStreamGetPriority_v5050: imp(stream_query::cu_stream_get_priority),
    cuStreamGetPriority_v7000_ptsz: imp(stream_query::cu_stream_get_priority),
    cuStreamGetId_v12000: imp(stream_query::cu_stream_get_id),
    cuStreamGetId_v12000_ptsz: imp(stream_query::cu_stream_get_id),
    cuStreamGetDevice_v12080: imp(stream_query::cu_stream_get_device),
    cuStreamGetDevice_v12080_ptsz: imp(stream_query::cu_stream_get_device),
    // event.rs
    cuCtxRecordEvent_v12050: imp(event::cu_ctx_record_event),
    cuEventCreate_v2000: imp(event::cu_event_create),
    cuEventDestroy_v2000: imp(event::cu_event_destroy),
    cuEventDestroy_v4000: imp(event::cu_event_destroy),
    cuEventRecord_v2000: imp(event::cu_event_record),
    cuEventRecord_v7000_ptsz: imp(event::cu_event_record),
    cuEventQuery_v2000: imp(event::cu_event_query),
    cuEventSynchronize_v2000: imp(event::cu_event_synchronize),
    cuEventElapsedTime_v2000: imp(event::cu_event_elapsed_time),
    cuEventElapsedTime_v12080: imp(event::cu_event_elapsed_time),
    cuStreamWaitEvent_v3020: imp(event::cu_stream_wait_event),
    cuStreamWaitEvent_v7000_ptsz: imp(event::cu_stream_wait_event),
    // host_register.rs
    cuMemHostRegister_v4000: imp(host_register::cu_mem_host_register),
    cuMemHostRegister_v6050: imp(host_register::cu_mem_host_register),
    cuMemHostUnregister_v4000: imp(host_register::cu_mem_host_unregister),
    // vmm.rs
    cuMemGetAllocationGranularity_v10020: imp(vmm::cu_mem_get_allocation_granularity),
    cuMemAddressReserve_v10020: imp(vmm::cu_mem_address_reserve),
    cuMemAddressFree_v10020: imp(vmm::cu_mem_address_free),
    cuMemCreate_v10020: imp(vmm::cu_mem_create),
    cuMemRelease_v10020: imp(vmm::cu_mem_release),
    cuMemMap_v10020: imp(vmm::cu_mem_map),
    cuMemUnmap_v10020: imp(vmm::cu_mem_unmap),
    cuMemSetAccess_v10020: imp(vmm::cu_mem_set_access),
    cuMemGetAccess_v10020: imp(vmm::cu_mem_get_access),
    cuMemExportToShareableHandle_v10020: imp(vmm::cu_mem_export_to_shareable_handle),
    cuMemImportFromShareableHandle_v10020: imp(vmm::cu_mem_import_from_shareable_handle),
    // memory_api.rs
    cuMemAlloc_v3020: imp(memory_api::cu_mem_alloc),
    cuMemFree_v3020: imp(memory_api::cu_mem_free),
    cuMemGetInfo_v3020: imp(memory_api::cu_mem_get_info),
    cuMemGetAddressRange_v3020: imp(memory_api::cu_mem_get_address_range),
    cuMemAllocAsync_v11020: imp(memory_api::cu_mem_alloc_async),
    cuMemAllocAsync_v11020_ptsz: imp(memory_api::cu_mem_alloc_async),
    cuMemFreeAsync_v11020: imp(memory_api::cu_mem_free_async),
    cuMemFreeAsync_v11020_ptsz: imp(memory_api::cu_mem_free_async),
    // host_memory.rs
    cuMemAllocHost_v3020: imp(host_memory::cu_mem_alloc_host),
    cuMemHostAlloc_v2020: imp(host_memory::cu_mem_host_alloc),
    cuMemFreeHost_v2000: imp(host_memory::cu_mem_free_host),
    cuMemHostGetFlags_v2030: imp(host_memory::cu_mem_host_get_flags),
    // copy.rs
    cuMemcpyHtoD_v3020: imp(copy::cu_memcpy_htod),
    cuMemcpyHtoD_v7000_ptds: imp(copy::cu_memcpy_htod),
    cuMemcpyDtoH_v3020: imp(copy::cu_memcpy_dtoh),
    cuMemcpyDtoH_v7000_ptds: imp(copy::cu_memcpy_dtoh),
    cuMemcpyDtoD_v3020: imp(copy::cu_memcpy_dtod),
    cuMemcpyDtoD_v7000_ptds: imp(copy::cu_memcpy_dtod),
    cuMemcpyHtoDAsync_v3020: imp(copy::cu_memcpy_htod_async),
    cuMemcpyHtoDAsync_v7000_ptsz: imp(copy::cu_memcpy_htod_async),
    cuMemcpyDtoHAsync_v3020: imp(copy::cu_memcpy_dtoh_async),
    cuMemcpyDtoHAsync_v7000_ptsz: imp(copy::cu_memcpy_dtoh_async),
    cuMemcpyDtoDAsync_v3020: imp(copy::cu_memcpy_dtod_async),
    cuMemcpyDtoDAsync_v7000_ptsz: imp(copy::cu_memcpy_dtod_async),
    cuMemsetD8_v3020: imp(copy::cu_memset_d8),
    cuMemsetD8_v7000_ptds: imp(copy::cu_memset_d8),
    cuMemsetD8Async_v3020: imp(copy::cu_memset_d8_async),
    cuMemsetD8Async_v7000_ptsz: imp(copy::cu_memset_d8_async),
    cuMemsetD16_v3020: imp(copy::cu_memset_d16),
    cuMemsetD16_v7000_ptds: imp(copy::cu_memset_d16),
    cuMemsetD16Async_v3020: imp(copy::cu_memset_d16_async),
    cuMemsetD16Async_v7000_ptsz: imp(copy::cu_memset_d16_async),
    cuMemsetD32_v3020: imp(copy::cu_memset_d32),
    cuMemsetD32_v7000_ptds: imp(copy::cu_memset_d32),
    cuMemsetD32Async_v3020: imp(copy::cu_memset_d32_async),
    cuMemsetD32Async_v7000_ptsz: imp(copy::cu_memset_d32_async),
    // copy_any.rs
    cuMemcpy_v4000: imp(copy_any::cu_memcpy),
    cuMemcpy_v7000_ptds: imp(copy_any::cu_memcpy),
    cuMemcpyAsync_v4000: imp(copy_any::cu_memcpy_async),
    cuMemcpyAsync_v7000_ptsz: imp(copy_any::cu_memcpy_async_ptsz),
    cuMemcpyBatchAsync_v12080: imp(copy_any::cu_memcpy_batch_async_v12080),
    cuMemcpyBatchAsync_v12080_ptsz: imp(copy_any::cu_memcpy_batch_async_v12080),
    cuMemcpyBatchAsync_v13000: imp(copy_any::cu_memcpy_batch_async),
    cuMemcpyBatchAsync_v13000_ptsz: imp(copy_any::cu_memcpy_batch_async),
    // pointer.rs
    cuPointerGetAttribute_v4000: imp(pointer::cu_pointer_get_attribute),
    cuPointerGetAttributes_v7000: imp(pointer::cu_pointer_get_attributes),
    cuMemHostGetDevicePointer_v3020: imp(pointer::cu_mem_host_get_device_pointer),
    // pool.rs
    cuMemGetDefaultMemPool_v13000: imp(pool::cu_mem_get_default_mem_pool),
    cuMemPoolCreate_v11020: imp(pool::cu_mem_pool_create),
    cuMemPoolDestroy_v11020: imp(pool::cu_mem_pool_destroy),
    cuDeviceGetDefaultMemPool_v11020: imp(pool::cu_device_get_default_mem_pool),
    cuMemAllocFromPoolAsync_v11020: imp(pool::cu_mem_alloc_from_pool_async),
    cuMemAllocFromPoolAsync_v11020_ptsz: imp(pool::cu_mem_alloc_from_pool_async),
    cuMemPoolTrimTo_v11020: imp(pool::cu_mem_pool_trim_to),
    cuMemPoolSetAccess_v11020: imp(pool::cu_mem_pool_set_access),
    // pool_attr.rs
    cuMemPoolGetAttribute_v11020: imp(pool_attr::cu_mem_pool_get_attribute),
    cuMemPoolSetAttribute_v11020: imp(pool_attr::cu_mem_pool_set_attribute),
    cuDeviceGetMemPool_v11020: imp(pool_attr::cu_device_get_mem_pool),
    cuDeviceSetMemPool_v11020: imp(pool_attr::cu_device_set_mem_pool),
    // ipc.rs
    cuMemPoolExportToShareableHandle_v11020: imp(ipc::cu_mem_pool_export_to_shareable_handle),
    cuMemPoolImportFromShareableHandle_v11020: imp(ipc::cu_mem_pool_import_from_shareable_handle),
    cuMemPoolExportPointer_v11020: imp(ipc::cu_mem_pool_export_pointer),
    cuMemPoolImportPointer_v11020: imp(ipc::cu_mem_pool_import_pointer),
    // peer.rs
    cuDeviceCanAccessPeer_v4000: imp(peer::cu_device_can_access_peer),
    cuDeviceGetP2PAttribute_v8000: imp(peer::cu_device_get_p2p_attribute),
    cuCtxEnablePeerAccess_v4000: imp(peer::cu_ctx_enable_peer_access),
    cuCtxDisablePeerAccess_v4000: imp(peer::cu_ctx_disable_peer_access),
    cuMemcpyPeer_v4000: imp(peer::cu_memcpy_peer),
    cuMemcpyPeer_v7000_ptds: imp(peer::cu_memcpy_peer),
    cuMemcpyPeerAsync_v4000: imp(peer::cu_memcpy_peer_async),
    cuMemcpyPeerAsync_v7000_ptsz: imp(peer::cu_memcpy_peer_async),
    // pci.rs
    cuDeviceGetPCIBusId_v4010: imp(pci::cu_device_get_pci_bus_id),
    cuDeviceGetByPCIBusId_v4010: imp(pci::cu_device_get_by_pci_bus_id),
    // module.rs
    cuModuleLoadData_v2000: imp(module::cu_module_load_data),
    cuModuleLoadDataEx_v2010: imp(module::cu_module_load_data_ex),
    cuModuleUnload_v2000: imp(module::cu_module_unload),
    cuModuleGetFunction_v2000: imp(module::cu_module_get_function),
    cuLibraryLoadData_v12000: imp(module::cu_library_load_data),
    cuLibraryUnload_v12000: imp(module::cu_library_unload),
    cuLibraryGetKernel_v12000: imp(module::cu_library_get_kernel),
    cuLibraryGetModule_v12000: imp(module::cu_library_get_module),
    cuKernelGetFunction_v12000: imp(module::cu_kernel_get_function),
    cuFuncGetName_v12030: imp(module::cu_func_get_name),
    cuKernelGetName_v12030: imp(module::cu_kernel_get_name),
    cuLibraryGetKernelCount_v12040: imp(module::cu_library_get_kernel_count),
    // global.rs
    cuModuleGetGlobal_v3020: imp(global::cu_module_get_global),
    cuLibraryGetGlobal_v12000: imp(global::cu_library_get_global),
    cuLibraryGetManaged_v12000: imp(global::cu_library_get_managed),
    // func_attr.rs
    cuFuncSetAttribute_v9000: imp(func_attr::cu_func_set_attribute),
    cuFuncGetAttribute_v2020: imp(func_attr::cu_func_get_attribute),
    cuKernelGetAttribute_v12000: imp(func_attr::cu_kernel_get_attribute),
    cuKernelSetAttribute_v12000: imp(func_attr::cu_kernel_set_attribute),
    cuFuncSetCacheConfig_v3000: imp(func_attr::cu_func_set_cache_config),
    cuKernelSetCacheConfig_v12000: imp(func_attr::cu_kernel_set_cache_config),
    cuCtxSetCacheConfig_v3020: imp(func_attr::cu_ctx_set_cache_config),
    cuCtxGetCacheConfig_v3020: imp(func_attr::cu_ctx_get_cache_config),
    cuFuncGetParamInfo_v12040: imp(func_attr::cu_func_get_param_info),
    cuKernelGetParamInfo_v12040: imp(func_attr::cu_kernel_get_param_info),
    // occupancy.rs
    cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050: imp(
        occupancy::cu_occupancy_max_active_blocks_per_multiprocessor,
    ),
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000: imp(
        occupancy::cu_occupancy_max_active_blocks_per_multiprocessor_with_flags,
    ),
    cuOccupancyMaxPotentialBlockSize_v6050: imp(occupancy::cu_occupancy_max_potential_block_size),
    cuOccupancyMaxPotentialBlockSizeWithFlags_v7000: imp(occupancy::cu_occupancy_max_potential_block_size_with_flags),
    cuOccupancyAvailableDynamicSMemPerBlock_v10020: imp(occupancy::cu_occupancy_available_dynamic_smem_per_block),
    cuOccupancyMaxActiveClusters_v11070: imp(occupancy::cu_occupancy_max_active_clusters),
    cuOccupancyMaxPotentialClusterSize_v11070: imp(occupancy::cu_occupancy_max_potential_cluster_size),
    // launch.rs
    cuLaunchKernel_v4000: imp(launch::cu_launch_kernel),
    cuLaunchKernel_v7000_ptsz: imp(launch::cu_launch_kernel),
    cuLaunchKernelEx_v11060: imp(launch::cu_launch_kernel_ex),
    cuLaunchKernelEx_v11060_ptsz: imp(launch::cu_launch_kernel_ex),
    // coop.rs
    cuLaunchCooperativeKernel_v9000: imp(coop::cu_launch_cooperative_kernel),
    cuLaunchCooperativeKernel_v9000_ptsz: imp(coop::cu_launch_cooperative_kernel),
    // linker.rs
    cuLinkCreate_v5050: imp(linker::cu_link_create),
    cuLinkCreate_v6050: imp(linker::cu_link_create),
    cuLinkAddData_v5050: imp(linker::cu_link_add_data),
    cuLinkAddData_v6050: imp(linker::cu_link_add_data),
    cuLinkComplete_v5050: imp(linker::cu_link_complete),
    cuLinkDestroy_v5050: imp(linker::cu_link_destroy),
    // graph.rs
    cuGraphCreate_v10000: imp(graph::cu_graph_create),
    cuGraphDestroy_v10000: imp(graph::cu_graph_destroy),
    cuGraphAddHostNode_v10000: imp(graph::cu_graph_add_host_node),
    cuGraphAddEmptyNode_v10000: imp(graph::cu_graph_add_empty_node),
    cuGraphGetNodes_v10000: imp(graph::cu_graph_get_nodes),
    cuGraphNodeGetType_v10000: imp(graph::cu_graph_node_get_type),
    cuGraphRetainUserObject_v11030: imp(graph::cu_graph_retain_user_object),
    cuGraphReleaseUserObject_v11030: imp(graph::cu_graph_release_user_object),
    cuGraphClone_v10000: imp(graph_clone::cu_graph_clone),
    cuGraphNodeFindInClone_v10000: imp(graph_clone::cu_graph_node_find_in_clone),
    cuGraphDebugDotPrint_v11030: imp(graph_clone::cu_graph_debug_dot_print),
    cuGraphAddDependencies_v10000: imp(graph_edges::cu_graph_add_dependencies),
    cuGraphAddDependencies_v12030: imp(graph_edges::cu_graph_add_dependencies_v12030),
    cuGraphRemoveDependencies_v10000: imp(graph_edges::cu_graph_remove_dependencies),
    cuGraphRemoveDependencies_v12030: imp(graph_edges::cu_graph_remove_dependencies_v12030),
    cuGraphGetEdges_v10000: imp(graph_edges::cu_graph_get_edges),
    cuGraphGetEdges_v12030: imp(graph_edges::cu_graph_get_edges_v12030),
    cuGraphGetRootNodes_v10000: imp(graph_edges::cu_graph_get_root_nodes),
    cuGraphNodeGetDependencies_v10000: imp(graph_edges::cu_graph_node_get_dependencies),
    cuGraphNodeGetDependencies_v12030: imp(graph_edges::cu_graph_node_get_dependencies_v12030),
    cuGraphNodeGetDependentNodes_v10000: imp(graph_edges::cu_graph_node_get_dependent_nodes),
    cuGraphNodeGetDependentNodes_v12030: imp(graph_edges::cu_graph_node_get_dependent_nodes_v12030),
    cuGraphKernelNodeGetParams_v10000: imp(graph_params::cu_graph_kernel_node_get_params),
    cuGraphKernelNodeGetParams_v12000: imp(graph_params::cu_graph_kernel_node_get_params_v12000),
    cuGraphKernelNodeSetParams_v10000: imp(graph_params::cu_graph_kernel_node_set_params),
    cuGraphKernelNodeSetParams_v12000: imp(graph_params::cu_graph_kernel_node_set_params_v12000),
    cuGraphExecKernelNodeSetParams_v10010: imp(graph_params::cu_graph_exec_kernel_node_set_params),
    cuGraphExecKernelNodeSetParams_v12000: imp(graph_params::cu_graph_exec_kernel_node_set_params_v12000),
    cuGraphMemsetNodeGetParams_v10000: imp(graph_params::cu_graph_memset_node_get_params),
    cuGraphMemsetNodeSetParams_v10000: imp(graph_params::cu_graph_memset_node_set_params),
    cuGraphExecMemsetNodeSetParams_v10020: imp(graph_params::cu_graph_exec_memset_node_set_params),
    cuGraphMemcpyNodeGetParams_v10000: imp(graph_params::cu_graph_memcpy_node_get_params),
    cuGraphMemcpyNodeSetParams_v10000: imp(graph_params::cu_graph_memcpy_node_set_params),
    cuGraphExecMemcpyNodeSetParams_v10020: imp(graph_params::cu_graph_exec_memcpy_node_set_params),
    cuGraphHostNodeGetParams_v10000: imp(graph_params::cu_graph_host_node_get_params),
    cuGraphHostNodeSetParams_v10000: imp(graph_params::cu_graph_host_node_set_params),
    cuGraphExecHostNodeSetParams_v10020: imp(graph_params::cu_graph_exec_host_node_set_params),
    cuGraphNodeSetEnabled_v11060: imp(graph_params::cu_graph_node_set_enabled),
    cuGraphNodeGetEnabled_v11060: imp(graph_params::cu_graph_node_get_enabled),
    cuGraphExecUpdate_v10020: imp(graph_update::cu_graph_exec_update),
    cuGraphExecUpdate_v12000: imp(graph_update::cu_graph_exec_update_v12000),
    cuGraphConditionalHandleCreate_v12030: imp(graph_cond::cu_graph_conditional_handle_create),
    cuGraphAddNode_v12020: imp(graph_cond::cu_graph_add_node),
    cuGraphAddNode_v12030: imp(graph_cond::cu_graph_add_node_v12030),
    cuGraphAddNode_v13040: imp(graph_cond::cu_graph_add_node_v13040),
    // graph_add.rs
    cuGraphAddEventRecordNode_v11010: imp(graph_add::cu_graph_add_event_record_node),
    cuGraphAddEventWaitNode_v11010: imp(graph_add::cu_graph_add_event_wait_node),
    cuGraphEventRecordNodeGetEvent_v11010: imp(graph_add::cu_graph_event_record_node_get_event),
    cuGraphEventWaitNodeGetEvent_v11010: imp(graph_add::cu_graph_event_wait_node_get_event),
    cuGraphAddChildGraphNode_v10000: imp(graph_add::cu_graph_add_child_graph_node),
    cuGraphChildGraphNodeGetGraph_v10000: imp(graph_add::cu_graph_child_graph_node_get_graph),
    cuGraphAddKernelNode_v10000: imp(graph_add::cu_graph_add_kernel_node),
    cuGraphAddKernelNode_v12000: imp(graph_add::cu_graph_add_kernel_node_v12000),
    cuGraphAddMemsetNode_v10000: imp(graph_add::cu_graph_add_memset_node),
    cuGraphAddMemcpyNode_v10000: imp(graph_add::cu_graph_add_memcpy_node),
    // graph_exec.rs
    cuGraphInstantiate_v10000: imp(graph_exec::cu_graph_instantiate),
    cuGraphInstantiate_v11000: imp(graph_exec::cu_graph_instantiate),
    cuGraphInstantiateWithFlags_v11040: imp(graph_exec::cu_graph_instantiate_with_flags),
    cuGraphInstantiateWithParams_v12000: imp(graph_exec::cu_graph_instantiate_with_params),
    cuGraphInstantiateWithParams_v12000_ptsz: imp(graph_exec::cu_graph_instantiate_with_params),
    cuGraphExecDestroy_v10000: imp(graph_exec::cu_graph_exec_destroy),
    cuGraphLaunch_v10000: imp(graph_exec::cu_graph_launch),
    cuGraphLaunch_v10000_ptsz: imp(graph_exec::cu_graph_launch),
    cuGraphUpload_v11010: imp(graph_exec::cu_graph_upload),
    cuGraphUpload_v11010_ptsz: imp(graph_exec::cu_graph_upload),
    cuGraphExecGetFlags_v12000: imp(graph_exec::cu_graph_exec_get_flags),
    // capture_api.rs
    cuStreamBeginCapture_v10000: imp(capture_api::cu_stream_begin_capture),
    cuStreamBeginCapture_v10000_ptsz: imp(capture_api::cu_stream_begin_capture),
    cuStreamBeginCapture_v10010: imp(capture_api::cu_stream_begin_capture_v10010),
    cuStreamBeginCapture_v10010_ptsz: imp(capture_api::cu_stream_begin_capture_v10010),
    cuStreamBeginCaptureToGraph_v12030: imp(capture_api::cu_stream_begin_capture_to_graph),
    cuStreamBeginCaptureToGraph_v12030_ptsz: imp(capture_api::cu_stream_begin_capture_to_graph),
    cuStreamEndCapture_v10000: imp(capture_api::cu_stream_end_capture),
    cuStreamEndCapture_v10000_ptsz: imp(capture_api::cu_stream_end_capture),
    cuStreamIsCapturing_v10000: imp(capture_api::cu_stream_is_capturing),
    cuStreamIsCapturing_v10000_ptsz: imp(capture_api::cu_stream_is_capturing),
    cuStreamGetCaptureInfo_v10010: imp(capture_api::cu_stream_get_capture_info),
    cuStreamGetCaptureInfo_v10010_ptsz: imp(capture_api::cu_stream_get_capture_info),
    cuStreamGetCaptureInfo_v11030: imp(capture_api::cu_stream_get_capture_info_v11030),
    cuStreamGetCaptureInfo_v11030_ptsz: imp(capture_api::cu_stream_get_capture_info_v11030),
    cuStreamGetCaptureInfo_v12030: imp(capture_api::cu_stream_get_capture_info_v12030),
    cuStreamGetCaptureInfo_v12030_ptsz: imp(capture_api::cu_stream_get_capture_info_v12030),
    cuThreadExchangeStreamCaptureMode_v10010: imp(capture_api::cu_thread_exchange_stream_capture_mode),
    // user_object.rs
    cuUserObjectCreate_v11030: imp(user_object::cu_user_object_create),
    cuUserObjectRetain_v11030: imp(user_object::cu_user_object_retain),
    cuUserObjectRelease_v11030: imp(user_object::cu_user_object_release),
    ..Table::NONE
};

#[cfg(test)]
mod tests {
    use cudrv::table::{NAMES, VARIANTS};

    use crate::entries::implemented;

    /// cudrv's unversioned names bind the newest variant with cuda.h's prototype (and, with
    /// the per-thread option, the newest such `_ptds`/`_ptsz` one): when the stand-in
    /// emulates a name, it must emulate every variant the name may bind.
    #[test]
    fn every_candidate_of_an_emulated_name_is_emulated() {
        let ident = |i: &usize| VARIANTS.get(*i).map_or("", |v| v.ident);
        let mut emulated = 0;
        for name in NAMES.iter() {
            let all: Vec<usize> = name.candidates.iter().chain(name.per_thread_candidates).copied().collect();
            if all.iter().any(|&v| implemented(v)) {
                emulated += 1;
                let missing: Vec<_> = all.iter().filter(|&&v| !implemented(v)).map(ident).collect();
                assert!(missing.is_empty(), "{}: {missing:?}", name.name);
            }
        }
        assert!(emulated >= 86, "{emulated}");
    }
}

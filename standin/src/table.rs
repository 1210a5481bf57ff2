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
    array, capture_api, context_api, coop, copy, copy3d, copy_any, ctx_query, device, entry, errors, event, func_attr,
    global, gpa, graph, graph_add, graph_clone, graph_cond, graph_edges, graph_exec, graph_params, graph_update, green,
    host_memory, host_register, interop, ipc, launch, linker, managed, memory_api, module, module_file, occupancy, pci,
    peer, pointer, pool, pool_attr, primary, stream, stream_attr, stream_memop, stream_query, texture, user_object,
    vmm,
};
use crate::{graph_generic, graph_mem, graph_mem_exec, graph_node_ops};

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
    cuGetExportTable_v3000: before_init(interop::cu_get_export_table),
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
    cuCtxGetSharedMemConfig_v4020: imp(ctx_query::cu_ctx_get_shared_mem_config),
    cuCtxSetSharedMemConfig_v4020: imp(ctx_query::cu_ctx_set_shared_mem_config),
    // ctx_device_misc.rs
    cuCtxGetId_v12000: imp(crate::ctx_device_misc::cu_ctx_get_id),
    cuGreenCtxGetId_v12090: imp(crate::ctx_device_misc::cu_green_ctx_get_id),
    cuCtxSetFlags_v12010: imp(crate::ctx_device_misc::cu_ctx_set_flags),
    cuCtxResetPersistingL2Cache_v11000: imp(crate::ctx_device_misc::cu_ctx_reset_persisting_l2_cache),
    cuCtxGetExecAffinity_v11040: imp(crate::ctx_device_misc::cu_ctx_get_exec_affinity),
    cuDeviceGetExecAffinitySupport_v11040: imp(crate::ctx_device_misc::cu_device_get_exec_affinity_support),
    cuDeviceComputeCapability_v2000: imp(crate::ctx_device_misc::cu_device_compute_capability),
    cuDeviceGetProperties_v2000: imp(crate::ctx_device_misc::cu_device_get_properties),
    cuDeviceGetTexture1DLinearMaxWidth_v11010: imp(crate::ctx_device_misc::cu_device_get_texture_1d_linear_max_width),
    cuDeviceGetLuid_v10000: imp(crate::ctx_device_misc::cu_device_get_luid),
    cuDeviceGetHostAtomicCapabilities_v13000: imp(crate::ctx_device_misc::cu_device_get_host_atomic_capabilities),
    cuDeviceGetP2PAtomicCapabilities_v13000: imp(crate::ctx_device_misc::cu_device_get_p2p_atomic_capabilities),
    cuFlushGPUDirectRDMAWrites_v11030: imp(crate::ctx_device_misc::cu_flush_gpu_direct_rdma_writes),
    // coredump_logs.rs
    cuCoredumpGetAttribute_v12010: imp(crate::coredump_logs::cu_coredump_get_attribute),
    cuCoredumpGetAttributeGlobal_v12010: imp(crate::coredump_logs::cu_coredump_get_attribute_global),
    cuCoredumpSetAttribute_v12010: imp(crate::coredump_logs::cu_coredump_set_attribute),
    cuCoredumpSetAttributeGlobal_v12010: imp(crate::coredump_logs::cu_coredump_set_attribute_global),
    cuLogsRegisterCallback_v12090: imp(crate::coredump_logs::cu_logs_register_callback),
    cuLogsUnregisterCallback_v12090: imp(crate::coredump_logs::cu_logs_unregister_callback),
    cuLogsCurrent_v12090: before_init(crate::coredump_logs::cu_logs_current),
    cuLogsDumpToFile_v12090: imp(crate::coredump_logs::cu_logs_dump_to_file),
    cuLogsDumpToMemory_v12090: imp(crate::coredump_logs::cu_logs_dump_to_memory),
    cuDeviceRegisterAsyncNotification_v12040: imp(crate::coredump_logs::cu_device_register_async_notification),
    cuDeviceUnregisterAsyncNotification_v12040: imp(crate::coredump_logs::cu_device_unregister_async_notification),
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
    // stream_attr.rs
    cuStreamGetAttribute_v11000: imp(stream_attr::cu_stream_get_attribute),
    cuStreamGetAttribute_v11000_ptsz: imp(stream_attr::cu_stream_get_attribute),
    cuStreamSetAttribute_v11000: imp(stream_attr::cu_stream_set_attribute),
    cuStreamSetAttribute_v11000_ptsz: imp(stream_attr::cu_stream_set_attribute),
    cuStreamCopyAttributes_v11000: imp(stream_attr::cu_stream_copy_attributes),
    cuStreamCopyAttributes_v11000_ptsz: imp(stream_attr::cu_stream_copy_attributes),
    // stream_memop.rs
    cuStreamWaitValue32_v8000: imp(stream_memop::cu_stream_mem_op_v1),
    cuStreamWaitValue32_v8000_ptsz: imp(stream_memop::cu_stream_mem_op_v1),
    cuStreamWaitValue32_v11070: imp(stream_memop::cu_stream_wait_value32),
    cuStreamWaitValue32_v11070_ptsz: imp(stream_memop::cu_stream_wait_value32),
    cuStreamWaitValue64_v9000: imp(stream_memop::cu_stream_mem_op_v1),
    cuStreamWaitValue64_v9000_ptsz: imp(stream_memop::cu_stream_mem_op_v1),
    cuStreamWaitValue64_v11070: imp(stream_memop::cu_stream_wait_value64),
    cuStreamWaitValue64_v11070_ptsz: imp(stream_memop::cu_stream_wait_value64),
    cuStreamWriteValue32_v8000: imp(stream_memop::cu_stream_mem_op_v1),
    cuStreamWriteValue32_v8000_ptsz: imp(stream_memop::cu_stream_mem_op_v1),
    cuStreamWriteValue32_v11070: imp(stream_memop::cu_stream_write_value32),
    cuStreamWriteValue32_v11070_ptsz: imp(stream_memop::cu_stream_write_value32),
    cuStreamWriteValue64_v9000: imp(stream_memop::cu_stream_mem_op_v1),
    cuStreamWriteValue64_v9000_ptsz: imp(stream_memop::cu_stream_mem_op_v1),
    cuStreamWriteValue64_v11070: imp(stream_memop::cu_stream_write_value64),
    cuStreamWriteValue64_v11070_ptsz: imp(stream_memop::cu_stream_write_value64),
    cuStreamBatchMemOp_v8000: imp(stream_memop::cu_stream_batch_mem_op_v1),
    cuStreamBatchMemOp_v8000_ptsz: imp(stream_memop::cu_stream_batch_mem_op_v1),
    cuStreamBatchMemOp_v11070: imp(stream_memop::cu_stream_batch_mem_op),
    cuStreamBatchMemOp_v11070_ptsz: imp(stream_memop::cu_stream_batch_mem_op),
    // green.rs
    cuDeviceGetDevResource_v12040: imp(green::cu_device_get_dev_resource),
    cuCtxGetDevResource_v12040: imp(green::cu_ctx_get_dev_resource),
    cuGreenCtxGetDevResource_v12040: imp(green::cu_green_ctx_get_dev_resource),
    cuDevSmResourceSplitByCount_v12040: imp(green::cu_dev_sm_resource_split_by_count),
    cuDevResourceGenerateDesc_v12040: imp(green::cu_dev_resource_generate_desc),
    cuGreenCtxCreate_v12040: imp(green::cu_green_ctx_create),
    cuGreenCtxDestroy_v12040: imp(green::cu_green_ctx_destroy),
    cuCtxFromGreenCtx_v12040: imp(green::cu_ctx_from_green_ctx),
    cuGreenCtxStreamCreate_v12050: imp(green::cu_green_ctx_stream_create),
    cuStreamGetGreenCtx_v12040: imp(green::cu_stream_get_green_ctx),
    // event.rs
    cuCtxRecordEvent_v12050: imp(event::cu_ctx_record_event),
    cuEventCreate_v2000: imp(event::cu_event_create),
    cuEventDestroy_v2000: imp(event::cu_event_destroy),
    cuEventDestroy_v4000: imp(event::cu_event_destroy),
    cuEventRecord_v2000: imp(event::cu_event_record),
    cuEventRecord_v7000_ptsz: imp(event::cu_event_record),
    cuEventQuery_v2000: imp(event::cu_event_query),
    cuEventRecordWithFlags_v11010: imp(event::cu_event_record_with_flags),
    cuEventRecordWithFlags_v11010_ptsz: imp(event::cu_event_record_with_flags),
    cuCtxWaitEvent_v12050: imp(event::cu_ctx_wait_event),
    cuEventSynchronize_v2000: imp(event::cu_event_synchronize),
    cuEventElapsedTime_v2000: imp(event::cu_event_elapsed_time),
    cuEventElapsedTime_v12080: imp(event::cu_event_elapsed_time),
    cuStreamWaitEvent_v3020: imp(event::cu_stream_wait_event),
    cuStreamWaitEvent_v7000_ptsz: imp(event::cu_stream_wait_event),
    cuIpcGetEventHandle_v4010: imp(event::cu_ipc_get_event_handle),
    cuIpcOpenEventHandle_v4010: imp(event::cu_ipc_open_event_handle),
    // host_register.rs
    cuMemHostRegister_v4000: imp(host_register::cu_mem_host_register),
    cuMemHostRegister_v6050: imp(host_register::cu_mem_host_register),
    cuMemHostUnregister_v4000: imp(host_register::cu_mem_host_unregister),
    // array.rs
    cuMemAllocPitch_v3020: imp(array::cu_mem_alloc_pitch),
    cuArrayCreate_v3020: imp(array::cu_array_create),
    cuArray3DCreate_v3020: imp(array::cu_array_3d_create),
    cuArrayGetDescriptor_v3020: imp(array::cu_array_get_descriptor),
    cuArray3DGetDescriptor_v3020: imp(array::cu_array_3d_get_descriptor),
    cuArrayDestroy_v2000: imp(array::cu_array_destroy),
    // mipmap.rs
    cuMipmappedArrayCreate_v5000: imp(crate::mipmap::cu_mipmapped_array_create),
    cuMipmappedArrayDestroy_v5000: imp(crate::mipmap::cu_mipmapped_array_destroy),
    cuMipmappedArrayGetLevel_v5000: imp(crate::mipmap::cu_mipmapped_array_get_level),
    // array_query.rs
    cuArrayGetPlane_v11020: imp(crate::array_query::cu_array_get_plane),
    cuArrayGetMemoryRequirements_v11060: imp(crate::array_query::cu_array_get_memory_requirements),
    cuMipmappedArrayGetMemoryRequirements_v11060: imp(crate::array_query::cu_mipmapped_array_get_memory_requirements),
    cuArrayGetSparseProperties_v11010: imp(crate::array_query::cu_array_get_sparse_properties),
    cuMipmappedArrayGetSparseProperties_v11010: imp(crate::array_query::cu_mipmapped_array_get_sparse_properties),
    // copy3d.rs
    cuMemcpy2D_v3020: imp(copy3d::cu_memcpy_2d),
    cuMemcpy2D_v7000_ptds: imp(copy3d::cu_memcpy_2d),
    cuMemcpy2DUnaligned_v3020: imp(copy3d::cu_memcpy_2d),
    cuMemcpy2DUnaligned_v7000_ptds: imp(copy3d::cu_memcpy_2d),
    cuMemcpy2DAsync_v3020: imp(copy3d::cu_memcpy_2d_async),
    cuMemcpy2DAsync_v7000_ptsz: imp(copy3d::cu_memcpy_2d_async),
    cuMemcpy3D_v3020: imp(copy3d::cu_memcpy_3d),
    cuMemcpy3D_v7000_ptds: imp(copy3d::cu_memcpy_3d),
    cuMemcpy3DAsync_v3020: imp(copy3d::cu_memcpy_3d_async),
    cuMemcpy3DAsync_v7000_ptsz: imp(copy3d::cu_memcpy_3d_async),
    // copy_array.rs
    cuMemcpyHtoA_v3020: imp(crate::copy_array::cu_memcpy_htoa),
    cuMemcpyHtoA_v7000_ptds: imp(crate::copy_array::cu_memcpy_htoa),
    cuMemcpyAtoH_v3020: imp(crate::copy_array::cu_memcpy_atoh),
    cuMemcpyAtoH_v7000_ptds: imp(crate::copy_array::cu_memcpy_atoh),
    cuMemcpyDtoA_v3020: imp(crate::copy_array::cu_memcpy_dtoa),
    cuMemcpyDtoA_v7000_ptds: imp(crate::copy_array::cu_memcpy_dtoa),
    cuMemcpyAtoD_v3020: imp(crate::copy_array::cu_memcpy_atod),
    cuMemcpyAtoD_v7000_ptds: imp(crate::copy_array::cu_memcpy_atod),
    cuMemcpyAtoA_v3020: imp(crate::copy_array::cu_memcpy_atoa),
    cuMemcpyAtoA_v7000_ptds: imp(crate::copy_array::cu_memcpy_atoa),
    cuMemcpyHtoAAsync_v3020: imp(crate::copy_array::cu_memcpy_htoa_async),
    cuMemcpyHtoAAsync_v7000_ptsz: imp(crate::copy_array::cu_memcpy_htoa_async),
    cuMemcpyAtoHAsync_v3020: imp(crate::copy_array::cu_memcpy_atoh_async),
    cuMemcpyAtoHAsync_v7000_ptsz: imp(crate::copy_array::cu_memcpy_atoh_async),
    cuMemcpy3DPeer_v4000: imp(crate::copy_array::cu_memcpy_3d_peer),
    cuMemcpy3DPeer_v7000_ptds: imp(crate::copy_array::cu_memcpy_3d_peer),
    cuMemcpy3DPeerAsync_v4000: imp(crate::copy_array::cu_memcpy_3d_peer_async),
    cuMemcpy3DPeerAsync_v7000_ptsz: imp(crate::copy_array::cu_memcpy_3d_peer_async),
    // texture.rs
    cuTexObjectCreate_v5000: imp(texture::cu_tex_object_create),
    cuTexObjectDestroy_v5000: imp(texture::cu_tex_object_destroy),
    cuTexObjectGetResourceDesc_v5000: imp(texture::cu_tex_object_get_resource_desc),
    cuTexObjectGetTextureDesc_v5000: imp(texture::cu_tex_object_get_texture_desc),
    cuSurfObjectCreate_v5000: imp(texture::cu_surf_object_create),
    cuSurfObjectDestroy_v5000: imp(texture::cu_surf_object_destroy),
    cuSurfObjectGetResourceDesc_v5000: imp(texture::cu_surf_object_get_resource_desc),
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
    // vmm_handle.rs
    cuMemRetainAllocationHandle_v11000: imp(crate::vmm_handle::cu_mem_retain_allocation_handle),
    cuMemGetAllocationPropertiesFromHandle_v10020: imp(crate::vmm_handle::cu_mem_get_allocation_properties_from_handle),
    cuMemGetHandleForAddressRange_v11070: imp(crate::vmm_handle::cu_mem_get_handle_for_address_range),
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
    // managed.rs
    cuMemAllocManaged_v6000: imp(managed::cu_mem_alloc_managed),
    cuStreamAttachMemAsync_v6000: imp(managed::cu_stream_attach_mem_async),
    cuStreamAttachMemAsync_v7000_ptsz: imp(managed::cu_stream_attach_mem_async),
    cuMemPrefetchAsync_v8000: imp(managed::cu_mem_prefetch_async),
    cuMemPrefetchAsync_v8000_ptsz: imp(managed::cu_mem_prefetch_async),
    cuMemPrefetchAsync_v12020: imp(managed::cu_mem_prefetch_async_v2),
    cuMemPrefetchAsync_v12020_ptsz: imp(managed::cu_mem_prefetch_async_v2),
    cuMemAdvise_v8000: imp(managed::cu_mem_advise),
    cuMemAdvise_v12020: imp(managed::cu_mem_advise_v2),
    cuMemRangeGetAttribute_v8000: imp(managed::cu_mem_range_get_attribute),
    cuMemRangeGetAttributes_v8000: imp(managed::cu_mem_range_get_attributes),
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
    // memset_2d.rs
    cuMemsetD2D8_v3020: imp(crate::memset_2d::cu_memset_d2d8),
    cuMemsetD2D8_v7000_ptds: imp(crate::memset_2d::cu_memset_d2d8),
    cuMemsetD2D8Async_v3020: imp(crate::memset_2d::cu_memset_d2d8_async),
    cuMemsetD2D8Async_v7000_ptsz: imp(crate::memset_2d::cu_memset_d2d8_async),
    cuMemsetD2D16_v3020: imp(crate::memset_2d::cu_memset_d2d16),
    cuMemsetD2D16_v7000_ptds: imp(crate::memset_2d::cu_memset_d2d16),
    cuMemsetD2D16Async_v3020: imp(crate::memset_2d::cu_memset_d2d16_async),
    cuMemsetD2D16Async_v7000_ptsz: imp(crate::memset_2d::cu_memset_d2d16_async),
    cuMemsetD2D32_v3020: imp(crate::memset_2d::cu_memset_d2d32),
    cuMemsetD2D32_v7000_ptds: imp(crate::memset_2d::cu_memset_d2d32),
    cuMemsetD2D32Async_v3020: imp(crate::memset_2d::cu_memset_d2d32_async),
    cuMemsetD2D32Async_v7000_ptsz: imp(crate::memset_2d::cu_memset_d2d32_async),
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
    cuPointerSetAttribute_v6000: imp(pointer::cu_pointer_set_attribute),
    cuMemHostGetDevicePointer_v3020: imp(pointer::cu_mem_host_get_device_pointer),
    // pool.rs
    cuMemGetDefaultMemPool_v13000: imp(pool::cu_mem_get_default_mem_pool),
    cuMemPoolCreate_v11020: imp(pool::cu_mem_pool_create),
    cuMemPoolDestroy_v11020: imp(pool::cu_mem_pool_destroy),
    cuDeviceGetDefaultMemPool_v11020: imp(pool::cu_device_get_default_mem_pool),
    cuMemAllocFromPoolAsync_v11020: imp(pool::cu_mem_alloc_from_pool_async),
    cuMemAllocFromPoolAsync_v11020_ptsz: imp(pool::cu_mem_alloc_from_pool_async),
    cuMemPoolTrimTo_v11020: imp(pool::cu_mem_pool_trim_to),
    // pool_attr.rs
    cuMemPoolGetAttribute_v11020: imp(pool_attr::cu_mem_pool_get_attribute),
    cuMemPoolSetAttribute_v11020: imp(pool_attr::cu_mem_pool_set_attribute),
    cuDeviceGetMemPool_v11020: imp(pool_attr::cu_device_get_mem_pool),
    cuDeviceSetMemPool_v11020: imp(pool_attr::cu_device_set_mem_pool),
    // pool_access.rs
    cuMemGetMemPool_v13000: imp(crate::pool_access::cu_mem_get_mem_pool),
    cuMemSetMemPool_v13000: imp(crate::pool_access::cu_mem_set_mem_pool),
    cuMemPoolSetAccess_v11020: imp(crate::pool_access::cu_mem_pool_set_access),
    cuMemPoolGetAccess_v11020: imp(crate::pool_access::cu_mem_pool_get_access),
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
    // module_file.rs
    cuModuleLoad_v2000: imp(module_file::cu_module_load),
    cuModuleLoadFatBinary_v2000: imp(module_file::cu_module_load_fat_binary),
    cuLibraryLoadFromFile_v12000: imp(module_file::cu_library_load_from_file),
    cuLibraryUnload_v12000: imp(module::cu_library_unload),
    cuLibraryGetKernel_v12000: imp(module::cu_library_get_kernel),
    cuLibraryGetModule_v12000: imp(module::cu_library_get_module),
    cuKernelGetFunction_v12000: imp(module::cu_kernel_get_function),
    cuFuncGetName_v12030: imp(module::cu_func_get_name),
    cuKernelGetName_v12030: imp(module::cu_kernel_get_name),
    cuLibraryGetKernelCount_v12040: imp(module::cu_library_get_kernel_count),
    // module_query.rs
    cuModuleGetLoadingMode_v11070: imp(crate::module_query::cu_module_get_loading_mode),
    cuModuleGetFunctionCount_v12040: imp(crate::module_query::cu_module_get_function_count),
    cuModuleEnumerateFunctions_v12040: imp(crate::module_query::cu_module_enumerate_functions),
    cuLibraryEnumerateKernels_v12040: imp(crate::module_query::cu_library_enumerate_kernels),
    cuKernelGetLibrary_v12050: imp(crate::module_query::cu_kernel_get_library),
    cuFuncGetModule_v11000: imp(crate::module_query::cu_func_get_module),
    cuFuncIsLoaded_v12040: imp(crate::module_query::cu_func_is_loaded),
    cuFuncLoad_v12040: imp(crate::module_query::cu_func_load),
    cuLibraryGetUnifiedFunction_v12000: imp(crate::module_query::cu_library_get_unified_function),
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
    cuFuncGetParamCount_v13020: imp(func_attr::cu_func_get_param_count),
    cuKernelGetParamCount_v13020: imp(func_attr::cu_kernel_get_param_count),
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
    cuLinkAddFile_v5050: imp(linker::cu_link_add_file),
    cuLinkAddFile_v6050: imp(linker::cu_link_add_file),
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
    // graph_generic.rs
    cuGraphNodeSetParams_v12020: imp(graph_generic::cu_graph_node_set_params),
    cuGraphNodeSetParams_v13040: imp(graph_generic::cu_graph_node_set_params_v13040),
    cuGraphExecNodeSetParams_v12020: imp(graph_generic::cu_graph_exec_node_set_params),
    cuGraphNodeGetParams_v13020: imp(graph_generic::cu_graph_node_get_params),
    cuGraphDestroyNode_v10000: imp(graph_generic::cu_graph_destroy_node),
    // graph_node_ops.rs
    cuGraphEventRecordNodeSetEvent_v11010: imp(graph_node_ops::cu_graph_event_record_node_set_event),
    cuGraphEventWaitNodeSetEvent_v11010: imp(graph_node_ops::cu_graph_event_wait_node_set_event),
    cuGraphExecEventRecordNodeSetEvent_v11010: imp(graph_node_ops::cu_graph_exec_event_record_node_set_event),
    cuGraphExecEventWaitNodeSetEvent_v11010: imp(graph_node_ops::cu_graph_exec_event_wait_node_set_event),
    cuGraphExecChildGraphNodeSetParams_v11010: imp(graph_node_ops::cu_graph_exec_child_graph_node_set_params),
    cuGraphKernelNodeGetAttribute_v11000: imp(graph_node_ops::cu_graph_kernel_node_get_attribute),
    cuGraphKernelNodeSetAttribute_v11000: imp(graph_node_ops::cu_graph_kernel_node_set_attribute),
    cuGraphKernelNodeCopyAttributes_v11000: imp(graph_node_ops::cu_graph_kernel_node_copy_attributes),
    cuGraphGetId_v13010: imp(graph_node_ops::cu_graph_get_id),
    cuGraphExecGetId_v13010: imp(graph_node_ops::cu_graph_exec_get_id),
    cuGraphNodeGetLocalId_v13010: imp(graph_node_ops::cu_graph_node_get_local_id),
    cuGraphNodeGetToolsId_v13010: imp(graph_node_ops::cu_graph_node_get_tools_id),
    cuGraphNodeGetContainingGraph_v13010: imp(graph_node_ops::cu_graph_node_get_containing_graph),
    // graph_mem.rs
    cuGraphAddMemAllocNode_v11040: imp(graph_mem::cu_graph_add_mem_alloc_node),
    cuGraphAddMemFreeNode_v11040: imp(graph_mem::cu_graph_add_mem_free_node),
    cuGraphMemAllocNodeGetParams_v11040: imp(graph_mem::cu_graph_mem_alloc_node_get_params),
    cuGraphMemFreeNodeGetParams_v11040: imp(graph_mem::cu_graph_mem_free_node_get_params),
    // graph_mem_exec.rs
    cuDeviceGetGraphMemAttribute_v11040: imp(graph_mem_exec::cu_device_get_graph_mem_attribute),
    cuDeviceSetGraphMemAttribute_v11040: imp(graph_mem_exec::cu_device_set_graph_mem_attribute),
    cuDeviceGraphMemTrim_v11040: imp(graph_mem_exec::cu_device_graph_mem_trim),
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
    cuStreamUpdateCaptureDependencies_v11030: imp(capture_api::cu_stream_update_capture_dependencies),
    cuStreamUpdateCaptureDependencies_v11030_ptsz: imp(capture_api::cu_stream_update_capture_dependencies),
    cuStreamUpdateCaptureDependencies_v12030: imp(capture_api::cu_stream_update_capture_dependencies_v12030),
    cuStreamUpdateCaptureDependencies_v12030_ptsz: imp(capture_api::cu_stream_update_capture_dependencies_v12030),
    cuThreadExchangeStreamCaptureMode_v10010: imp(capture_api::cu_thread_exchange_stream_capture_mode),
    // user_object.rs
    cuUserObjectCreate_v11030: imp(user_object::cu_user_object_create),
    cuUserObjectRetain_v11030: imp(user_object::cu_user_object_retain),
    cuUserObjectRelease_v11030: imp(user_object::cu_user_object_release),
    // extmem.rs
    cuImportExternalMemory_v10000: imp(crate::extmem::cu_import_external_memory),
    cuExternalMemoryGetMappedBuffer_v10000: imp(crate::extmem::cu_external_memory_get_mapped_buffer),
    cuExternalMemoryGetMappedMipmappedArray_v10000: imp(crate::extmem::cu_external_memory_get_mapped_mipmapped_array),
    cuDestroyExternalMemory_v10000: imp(crate::extmem::cu_destroy_external_memory),
    // extsem.rs
    cuImportExternalSemaphore_v10000: imp(crate::extsem::cu_import_external_semaphore),
    cuDestroyExternalSemaphore_v10000: imp(crate::extsem::cu_destroy_external_semaphore),
    cuSignalExternalSemaphoresAsync_v10000: imp(crate::extsem::cu_signal_external_semaphores_async),
    cuSignalExternalSemaphoresAsync_v10000_ptsz: imp(crate::extsem::cu_signal_external_semaphores_async),
    cuWaitExternalSemaphoresAsync_v10000: imp(crate::extsem::cu_wait_external_semaphores_async),
    cuWaitExternalSemaphoresAsync_v10000_ptsz: imp(crate::extsem::cu_wait_external_semaphores_async),
    cuGraphAddExternalSemaphoresSignalNode_v11020: imp(crate::extsem::cu_graph_add_external_semaphores_signal_node),
    cuGraphAddExternalSemaphoresWaitNode_v11020: imp(crate::extsem::cu_graph_add_external_semaphores_wait_node),
    cuGraphExternalSemaphoresSignalNodeGetParams_v11020: imp(
        crate::extsem::cu_graph_external_semaphores_signal_node_get_params,
    ),
    cuGraphExternalSemaphoresSignalNodeSetParams_v11020: imp(
        crate::extsem::cu_graph_external_semaphores_signal_node_set_params,
    ),
    cuGraphExternalSemaphoresWaitNodeGetParams_v11020: imp(
        crate::extsem::cu_graph_external_semaphores_wait_node_get_params,
    ),
    cuGraphExternalSemaphoresWaitNodeSetParams_v11020: imp(
        crate::extsem::cu_graph_external_semaphores_wait_node_set_params,
    ),
    cuGraphExecExternalSemaphoresSignalNodeSetParams_v11020: imp(
        crate::extsem::cu_graph_exec_external_semaphores_signal_node_set_params,
    ),
    cuGraphExecExternalSemaphoresWaitNodeSetParams_v11020: imp(
        crate::extsem::cu_graph_exec_external_semaphores_wait_node_set_params,
    ),
    // ipc_mem.rs
    cuIpcGetMemHandle_v4010: imp(crate::ipc_mem::cu_ipc_get_mem_handle),
    cuIpcOpenMemHandle_v4010: imp(crate::ipc_mem::cu_ipc_open_mem_handle),
    cuIpcOpenMemHandle_v11000: imp(crate::ipc_mem::cu_ipc_open_mem_handle),
    cuIpcCloseMemHandle_v4010: imp(crate::ipc_mem::cu_ipc_close_mem_handle),
    // checkpoint.rs
    cuCheckpointProcessGetState_v12080: imp(crate::checkpoint::cu_checkpoint_process_get_state),
    cuCheckpointProcessGetRestoreThreadId_v12080: imp(crate::checkpoint::cu_checkpoint_process_get_restore_thread_id),
    cuCheckpointProcessLock_v12080: imp(crate::checkpoint::cu_checkpoint_process_lock),
    cuCheckpointProcessCheckpoint_v12080: imp(crate::checkpoint::cu_checkpoint_process_checkpoint),
    cuCheckpointProcessRestore_v12080: imp(crate::checkpoint::cu_checkpoint_process_restore),
    cuCheckpointProcessUnlock_v12080: imp(crate::checkpoint::cu_checkpoint_process_unlock),
    // multicast.rs
    cuMulticastCreate_v12010: imp(crate::multicast::cu_multicast_create),
    cuMulticastGetGranularity_v12010: imp(crate::multicast::cu_multicast_get_granularity),
    cuMulticastAddDevice_v12010: imp(crate::multicast::cu_multicast_add_device),
    cuMulticastBindMem_v12010: imp(crate::multicast::cu_multicast_bind_mem),
    cuMulticastBindMem_v13010: imp(crate::multicast::cu_multicast_bind_mem_v2),
    cuMulticastBindAddr_v12010: imp(crate::multicast::cu_multicast_bind_addr),
    cuMulticastBindAddr_v13010: imp(crate::multicast::cu_multicast_bind_addr_v2),
    cuMulticastUnbind_v12010: imp(crate::multicast::cu_multicast_unbind),
    // tensor_map.rs
    cuTensorMapEncodeTiled_v12000: imp(crate::tensor_map::cu_tensor_map_encode_tiled),
    cuTensorMapEncodeIm2col_v12000: imp(crate::tensor_map::cu_tensor_map_encode_im2col),
    cuTensorMapEncodeIm2colWide_v12080: imp(crate::tensor_map::cu_tensor_map_encode_im2col_wide),
    cuTensorMapReplaceAddress_v12000: imp(crate::tensor_map::cu_tensor_map_replace_address),
    // green_event.rs
    cuGreenCtxRecordEvent_v12040: imp(crate::green_event::cu_green_ctx_record_event),
    cuGreenCtxWaitEvent_v12040: imp(crate::green_event::cu_green_ctx_wait_event),
    // managed_batch.rs
    cuMemPrefetchBatchAsync_v13000: imp(crate::managed_batch::cu_mem_prefetch_batch_async),
    cuMemPrefetchBatchAsync_v13000_ptsz: imp(crate::managed_batch::cu_mem_prefetch_batch_async),
    cuMemDiscardBatchAsync_v13000: imp(crate::managed_batch::cu_mem_discard_batch_async),
    cuMemDiscardBatchAsync_v13000_ptsz: imp(crate::managed_batch::cu_mem_discard_batch_async),
    cuMemDiscardAndPrefetchBatchAsync_v13000: imp(crate::managed_batch::cu_mem_discard_and_prefetch_batch_async),
    cuMemDiscardAndPrefetchBatchAsync_v13000_ptsz: imp(crate::managed_batch::cu_mem_discard_and_prefetch_batch_async),
    cuMemBatchDecompressAsync_v12060: imp(crate::managed_batch::cu_mem_batch_decompress_async),
    cuMemBatchDecompressAsync_v12060_ptsz: imp(crate::managed_batch::cu_mem_batch_decompress_async),
    // copy3d_batch.rs
    cuMemcpy3DBatchAsync_v12080: imp(crate::copy3d_batch::cu_memcpy_3d_batch_async_v12080),
    cuMemcpy3DBatchAsync_v12080_ptsz: imp(crate::copy3d_batch::cu_memcpy_3d_batch_async_v12080),
    cuMemcpy3DBatchAsync_v13000: imp(crate::copy3d_batch::cu_memcpy_3d_batch_async),
    cuMemcpy3DBatchAsync_v13000_ptsz: imp(crate::copy3d_batch::cu_memcpy_3d_batch_async),
    // map_array.rs
    cuMemMapArrayAsync_v11010: imp(crate::map_array::cu_mem_map_array_async),
    cuMemMapArrayAsync_v11010_ptsz: imp(crate::map_array::cu_mem_map_array_async),
    // graph_memop.rs
    cuGraphAddBatchMemOpNode_v11070: imp(crate::graph_memop::cu_graph_add_batch_mem_op_node),
    cuGraphBatchMemOpNodeGetParams_v11070: imp(crate::graph_memop::cu_graph_batch_mem_op_node_get_params),
    cuGraphBatchMemOpNodeSetParams_v11070: imp(crate::graph_memop::cu_graph_batch_mem_op_node_set_params),
    cuGraphExecBatchMemOpNodeSetParams_v11070: imp(crate::graph_memop::cu_graph_exec_batch_mem_op_node_set_params),
    // legacy_launch.rs
    cuFuncSetBlockShape_v2000: imp(crate::legacy_launch::cu_func_set_block_shape),
    cuFuncSetSharedSize_v2000: imp(crate::legacy_launch::cu_func_set_shared_size),
    cuParamSetSize_v2000: imp(crate::legacy_launch::cu_param_set_size),
    cuParamSeti_v2000: imp(crate::legacy_launch::cu_param_seti),
    cuParamSetf_v2000: imp(crate::legacy_launch::cu_param_setf),
    cuParamSetv_v2000: imp(crate::legacy_launch::cu_param_setv),
    cuParamSetTexRef_v2000: imp(crate::legacy_launch::cu_param_set_tex_ref),
    cuLaunch_v2000: imp(crate::legacy_launch::cu_launch),
    cuLaunchGrid_v2000: imp(crate::legacy_launch::cu_launch_grid),
    cuLaunchGridAsync_v2000: imp(crate::legacy_launch::cu_launch_grid_async),
    cuFuncSetSharedMemConfig_v4020: imp(crate::legacy_launch::cu_func_set_shared_mem_config),
    // coop_multi.rs
    cuLaunchCooperativeKernelMultiDevice_v9000: imp(crate::coop_multi::cu_launch_cooperative_kernel_multi_device),
    // legacy_ctx.rs
    cuCtxAttach_v2000: imp(crate::legacy_ctx::cu_ctx_attach),
    cuCtxDetach_v2000: imp(crate::legacy_ctx::cu_ctx_detach),
    // texture.rs (views)
    cuTexObjectGetResourceViewDesc_v5000: imp(crate::texture::cu_tex_object_get_resource_view_desc),
    // texref.rs
    cuTexRefCreate_v2000: imp(crate::texref::cu_tex_ref_create),
    cuTexRefDestroy_v2000: imp(crate::texref::cu_tex_ref_destroy),
    cuTexRefSetAddress_v2000: imp(crate::texref::cu_tex_ref_set_address_v1),
    cuTexRefSetAddress_v3020: imp(crate::texref::cu_tex_ref_set_address),
    cuTexRefSetAddress2D_v2020: imp(crate::texref::cu_tex_ref_set_address_2d_v1),
    cuTexRefSetAddress2D_v3020: imp(crate::texref::cu_tex_ref_set_address_2d),
    cuTexRefSetAddress2D_v4010: imp(crate::texref::cu_tex_ref_set_address_2d),
    cuTexRefSetArray_v2000: imp(crate::texref::cu_tex_ref_set_array),
    cuTexRefSetMipmappedArray_v5000: imp(crate::texref::cu_tex_ref_set_mipmapped_array),
    cuTexRefGetAddress_v2000: imp(crate::texref::cu_tex_ref_get_address_v1),
    cuTexRefGetAddress_v3020: imp(crate::texref::cu_tex_ref_get_address),
    cuTexRefGetArray_v2000: imp(crate::texref::cu_tex_ref_get_array),
    cuTexRefGetMipmappedArray_v5000: imp(crate::texref::cu_tex_ref_get_mipmapped_array),
    cuModuleGetTexRef_v2000: imp(crate::texref::cu_module_get_tex_ref),
    cuModuleGetSurfRef_v3000: imp(crate::texref::cu_module_get_surf_ref),
    cuSurfRefSetArray_v3000: imp(crate::texref::cu_surf_ref_set_array),
    cuSurfRefGetArray_v3000: imp(crate::texref::cu_surf_ref_get_array),
    // texref_sampling.rs
    cuTexRefSetAddressMode_v2000: imp(crate::texref_sampling::cu_tex_ref_set_address_mode),
    cuTexRefGetAddressMode_v2000: imp(crate::texref_sampling::cu_tex_ref_get_address_mode),
    cuTexRefSetFilterMode_v2000: imp(crate::texref_sampling::cu_tex_ref_set_filter_mode),
    cuTexRefGetFilterMode_v2000: imp(crate::texref_sampling::cu_tex_ref_get_filter_mode),
    cuTexRefSetMipmapFilterMode_v5000: imp(crate::texref_sampling::cu_tex_ref_set_mipmap_filter_mode),
    cuTexRefGetMipmapFilterMode_v5000: imp(crate::texref_sampling::cu_tex_ref_get_mipmap_filter_mode),
    cuTexRefSetMipmapLevelBias_v5000: imp(crate::texref_sampling::cu_tex_ref_set_mipmap_level_bias),
    cuTexRefGetMipmapLevelBias_v5000: imp(crate::texref_sampling::cu_tex_ref_get_mipmap_level_bias),
    cuTexRefSetMipmapLevelClamp_v5000: imp(crate::texref_sampling::cu_tex_ref_set_mipmap_level_clamp),
    cuTexRefGetMipmapLevelClamp_v5000: imp(crate::texref_sampling::cu_tex_ref_get_mipmap_level_clamp),
    cuTexRefSetMaxAnisotropy_v5000: imp(crate::texref_sampling::cu_tex_ref_set_max_anisotropy),
    cuTexRefGetMaxAnisotropy_v5000: imp(crate::texref_sampling::cu_tex_ref_get_max_anisotropy),
    cuTexRefSetBorderColor_v8000: imp(crate::texref_sampling::cu_tex_ref_set_border_color),
    cuTexRefGetBorderColor_v8000: imp(crate::texref_sampling::cu_tex_ref_get_border_color),
    cuTexRefSetFlags_v2000: imp(crate::texref_sampling::cu_tex_ref_set_flags),
    cuTexRefGetFlags_v2000: imp(crate::texref_sampling::cu_tex_ref_get_flags),
    cuTexRefSetFormat_v2000: imp(crate::texref_sampling::cu_tex_ref_set_format),
    cuTexRefGetFormat_v2000: imp(crate::texref_sampling::cu_tex_ref_get_format),
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

    /// A capability row of `device_attributes.rs` reads present exactly when the entry point
    /// that provides it is implemented (DMA_BUF aside: its entry answers, with no dma-buf;
    /// SPARSE_CUDA_ARRAY and DEFERRED_MAPPING_CUDA_ARRAY aside: `cuMemMapArrayAsync`
    /// answers, and refuses every array, the stand-in making no sparse or deferred one).
    #[test]
    fn capability_attributes_follow_the_table() {
        use crate::device_attributes::value;
        use cudrv::call as C;
        use cudrv::sys::CUdevice_attribute as A;
        let rows = [
            (A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, C::cuMemHostGetDevicePointer_v3020),
            (A::CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, C::cuStreamCreateWithPriority_v5050),
            (A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, C::cuMemAllocManaged_v6000),
            (A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, C::cuMemAllocManaged_v6000),
            (A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, C::cuLaunchCooperativeKernel_v9000),
            (A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH, C::cuLaunchCooperativeKernelMultiDevice_v9000),
            (A::CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, C::cuMemHostRegister_v6050),
            (A::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, C::cuMemCreate_v10020),
            (
                A::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                C::cuMemExportToShareableHandle_v10020,
            ),
            (A::CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, C::cuMemHostRegister_v6050),
            (A::CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED, C::cuImportExternalSemaphore_v10000),
            (A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, C::cuMemPoolCreate_v11020),
            (A::CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, C::cuFlushGPUDirectRDMAWrites_v11030),
            (A::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, C::cuLaunchKernelEx_v11060),
            (A::CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, C::cuStreamWaitValue64_v11070),
            (A::CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, C::cuStreamWaitValue32_v11070),
            (A::CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, C::cuIpcGetEventHandle_v4010),
            (A::CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED, C::cuTensorMapEncodeTiled_v12000),
            (A::CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, C::cuMemPoolCreate_v11020),
            (A::CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, C::cuMemPoolCreate_v11020),
            (A::CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED, C::cuStreamBatchMemOp_v11070),
        ];
        for (attribute, call) in rows {
            let index = match call.entry() {
                cudrv::table::Entry::Variant(i) => Some(i),
                _ => None,
            };
            assert!(index.is_some(), "{call} is not a variant");
            let present = value(13050, attribute, 0).is_some_and(|v| v != 0);
            assert_eq!(
                present,
                index.is_some_and(implemented),
                "{attribute:?} and {call}: update device_attributes.rs"
            );
        }
    }

    /// The share of the H200 driver's entry points the stand-in emulates (issue 29, item 4,
    /// published in docs/stand-in.md): the names `libcuda.so.1` exports (`nm -D`), without
    /// their `_vN`/`_ptds`/`_ptsz` suffixes, the debugger's `cudbg*` symbols and the
    /// graphics interop and profiler names (answered as recorded: `interop.rs`), against
    /// the names of which some variant is emulated. A floor: it may only grow.
    #[test]
    fn the_share_of_the_drivers_entry_points_emulated() {
        const EXPORTS: &str = include_str!("../../docs/gpu-runs/h200/libcuda-exports-580.159.04.txt");
        let base = |n: &str| {
            let n = n.strip_suffix("_ptds").or_else(|| n.strip_suffix("_ptsz")).unwrap_or(n);
            match n.rsplit_once("_v") {
                Some((b, v)) if !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit()) => b.to_string(),
                _ => n.to_string(),
            }
        };
        let interop = |n: &str| ["GL", "EGL", "VDPAU", "Graphics", "NvSci", "Profiler"].iter().any(|k| n.contains(k));
        let driver: std::collections::BTreeSet<String> = EXPORTS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("cudbg"))
            .map(base)
            .filter(|n| !interop(n))
            .collect();
        let emulated: std::collections::BTreeSet<String> = VARIANTS
            .iter()
            .enumerate()
            .filter(|(i, _)| implemented(*i))
            .map(|(_, v)| v.symbol_str().to_string())
            .collect();
        let count = driver.iter().filter(|n| emulated.contains(*n)).count();
        println!("emulated {count} of {} names the H200's driver has outside graphics interop", driver.len());
        let missing: Vec<&String> = driver.iter().filter(|n| !emulated.contains(*n)).collect();
        println!("not emulated: {missing:?}");
        assert_eq!(driver.len(), 440);
        assert!(count >= 439, "{count} of {}; not emulated: {missing:?}", driver.len());
    }
}

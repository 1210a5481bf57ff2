//! The model: the state a world holds, as plain Rust types with the rules that concern
//! only themselves. Nothing here knows the C entry points or the world: the entry
//! implementations (the modules beside `model/`) take the state from the world and call
//! these.

pub(crate) mod array;
pub(crate) mod capture;
pub(crate) mod context;
pub(crate) mod device;
pub(crate) mod event;
pub(crate) mod extres;
pub(crate) mod fatbin;
pub(crate) mod faults;
pub(crate) mod graph;
pub(crate) mod graph_mem;
pub(crate) mod green;
pub(crate) mod handles;
pub(crate) mod image;
pub(crate) mod legacy;
pub(crate) mod link;
pub(crate) mod managed;
pub(crate) mod memory;
pub(crate) mod misc;
pub(crate) mod module;
pub(crate) mod pool;
pub(crate) mod primary;
pub(crate) mod ptx;
pub(crate) mod stream;
pub(crate) mod tensor_map;
pub(crate) mod user_object;
pub(crate) mod vmm;
pub(crate) mod zstd;

//! Modules shared by their text ([`Module::load_shared`]): a text loaded again while a
//! module of it is alive gives that module, whose functions are translated (and their hot
//! runs compiled) once for every holder.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::module::Module;
use crate::parse::PtxError;

/// The live modules by text (an entry whose module has been dropped is removed at the next
/// load).
static LOADED: Mutex<Option<HashMap<Arc<str>, Weak<Module>>>> = Mutex::new(None);

impl Module {
    /// [`Module::load`], shared: while a module loaded from the same text by this call is
    /// alive (held by any clone of its `Arc`), the same module, with every translation and
    /// compiled run it has made; else a new one, remembered for the next call. The module
    /// runs with [`Executor::from_env`](crate::Executor::from_env)'s executor (a shared
    /// module cannot be given another). Errors are [`Module::load`]'s, and nothing is
    /// remembered of a text that failed.
    pub fn load_shared(text: &str) -> Result<Arc<Module>, PtxError> {
        if let Some(m) = with_loaded(|loaded| loaded.get(text).and_then(Weak::upgrade)) {
            return Ok(m);
        }
        // Loaded outside the lock: two threads loading one text at once may both load it
        // (the second to finish is remembered); neither waits for the other's parse.
        let m = Arc::new(Module::load(text)?);
        with_loaded(|loaded| {
            loaded.retain(|_, w| w.strong_count() > 0);
            loaded.insert(Arc::from(text), Arc::downgrade(&m));
        });
        Ok(m)
    }
}

fn with_loaded<T>(f: impl FnOnce(&mut HashMap<Arc<str>, Weak<Module>>) -> T) -> T {
    // A panic under this lock cannot leave the map half-changed in a way that matters: every
    // entry is a weak reference checked before use.
    let mut guard = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    f(guard.get_or_insert_with(HashMap::new))
}

//! One `Call` constant per entry (`call::cuMemAlloc`,
//! `call::cuLaunchHostFunc_v13010`): how hand-written code names a call in an error or a
//! report without typing its name as a string (see [`crate::table::Call`]).

#![allow(non_upper_case_globals)]

include!("generated/calls.rs");

//! The instruction suite: its inputs, its forms and the PTX it runs (shared by the test and
//! the example that writes the suite out for the GPU).
#![allow(dead_code)]

pub mod forms;
pub mod gen;
pub mod run;
pub mod values;

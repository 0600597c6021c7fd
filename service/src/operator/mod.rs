//! The operator's work, with no HTTP surface: provisioning businesses (`kobo business ...`,
//! the demo business, the test kit's businesses). Uses every inner layer.

pub mod businesses;
pub mod demo_scale;

//! Golden tests of the generator on its own fixture spec.

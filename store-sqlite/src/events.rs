//! TODO
pub(crate) async fn write(_: &mut crate::Tx, _: crate::batch::NewEvent) -> Result<(), crate::StoreError> { todo!() }

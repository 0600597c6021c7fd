//! TODO
pub(crate) async fn write(_: &mut crate::Tx, _: kobo_store::transfers::NewTransfer) -> Result<(), crate::StoreError> { todo!() }

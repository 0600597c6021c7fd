//! TODO
pub(crate) async fn write_audit(_: &mut crate::Tx, _: crate::batch::NewAudit) -> Result<(), crate::StoreError> { todo!() }

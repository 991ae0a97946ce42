/// An authenticated admin request, as the audit trail records it: which token, which request,
/// from which client address. Built at the edge (`AdminAuthenticator`), passed into the domain,
/// which never sees HTTP.
struct AdminActor: Sendable, Equatable {
  /// The token's name from `ADMIN_TOKENS`.
  var name: String
  var requestId: String
  var clientAddress: String
}

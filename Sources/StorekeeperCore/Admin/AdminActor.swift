/// An authenticated admin request, as the audit trail records it: which token, which request,
/// from which client address. Built at the edge (`AdminAuthenticator`), passed into the domain,
/// which never sees HTTP.
package struct AdminActor: Sendable, Equatable {
  /// The token's name from `ADMIN_TOKENS`.
  package var name: String
  var requestId: String
  var clientAddress: String

  package init(name: String, requestId: String, clientAddress: String) {
    self.name = name
    self.requestId = requestId
    self.clientAddress = clientAddress
  }
}

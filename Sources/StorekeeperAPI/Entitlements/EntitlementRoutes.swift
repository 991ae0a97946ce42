import HTTP
import StorekeeperCore

/// `GET /v1/users/{user_id}/entitlements`.
package struct EntitlementRoutes: Sendable {
  let repository: EntitlementRepository
  let auth: AppAuthenticator

  package init(repository: EntitlementRepository, auth: AppAuthenticator) {
    self.repository = repository
    self.auth = auth
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/v1/users/{user_id}/entitlements", placement: .eventLoop) {
      request, context in
      let caller = try await auth.caller(request, context)
      let named = context.parameters["user_id"] ?? ""
      guard UserId.isValid(named) else {
        throw HTTPError(
          400, code: "invalid_user_id", detail: "user_id must be 1-128 printable characters")
      }
      let userId = try auth.user(caller, named: named) ?? named
      return try JSONCoding.response(try await repository.view(userId: userId))
    }
  }
}

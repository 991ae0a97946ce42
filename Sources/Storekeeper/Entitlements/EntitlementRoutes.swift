import HTTP

/// `GET /v1/users/{user_id}/entitlements`.
struct EntitlementRoutes: Sendable {
  let repository: EntitlementRepository

  func register(_ router: inout APIRouter) {
    router.add(.get, "/v1/users/{user_id}/entitlements", placement: .eventLoop) { _, context in
      let userId = context.parameters["user_id"] ?? ""
      guard UserId.isValid(userId) else {
        throw HTTPError(
          400, code: "invalid_user_id", detail: "user_id must be 1-128 printable characters")
      }
      return try JSONCoding.response(try await repository.view(userId: userId))
    }
  }
}

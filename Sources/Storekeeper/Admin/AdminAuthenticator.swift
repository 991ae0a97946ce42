import HTTP

/// Admin bearer tokens (`ADMIN_TOKENS=name:token,…`). Every comparison runs over every token
/// and every byte, so the time taken says nothing about how close a guess was.
struct AdminAuthenticator: Sendable {
  struct Token: Sendable {
    var name: String
    var secret: [UInt8]
  }

  let tokens: [Token]

  /// Returns the name of the token presented, or throws 401.
  func authenticate(_ request: Request) throws -> String {
    guard let header = request.headers["Authorization"], header.count > 7,
      header.prefix(7).lowercased() == "bearer "
    else { throw Self.unauthorized("send Authorization: Bearer <admin token>") }
    let presented = Array(header.utf8.dropFirst(7))
    var match: String?
    for token in tokens where Self.constantTimeEquals(presented, token.secret) {
      match = token.name
    }
    guard let match else { throw Self.unauthorized("the admin token is not valid") }
    return match
  }

  static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    var difference = UInt64(a.count ^ b.count)
    let length = max(a.count, b.count)
    for index in 0..<length {
      let x = index < a.count ? a[index] : 0
      let y = index < b.count ? b[index] : 0
      difference |= UInt64(x ^ y)
    }
    return difference == 0
  }

  private static func unauthorized(_ detail: String) -> HTTPError {
    HTTPError(
      401, code: "unauthorized", detail: detail,
      headers: HTTPHeaders([("WWW-Authenticate", "Bearer realm=\"storekeeper-admin\"")]))
  }
}

import HTTP

/// The user a request acts for, as far as limits are concerned: today the `user_id` it names
/// in its path or body (JSON or form). Once requests are authenticated this is where the
/// authenticated user comes from instead.
enum ActingUser {
  static func id(_ request: Request, _ context: Context) -> String? {
    if let id = context.parameters["user_id"] { return id }
    guard var fields = try? RequestFields(request: request, allowForm: true) else { return nil }
    return fields.string("user_id", maxLength: 128)
  }
}

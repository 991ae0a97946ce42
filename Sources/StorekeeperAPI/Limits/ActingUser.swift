import HTTP

/// The user a request names in its path or body (JSON or form): whom a trusted caller
/// (`APP_AUTH=api_key` or `none`) acts for, as far as limits are concerned. A signed-in user's
/// bucket is keyed by the token's user instead (`Application` wires that into `APIRouter`).
enum ActingUser {
  static func id(_ request: Request, _ context: Context) -> String? {
    if let id = context.parameters["user_id"] { return id }
    guard var fields = try? RequestFields(request: request, allowForm: true) else { return nil }
    return fields.string("user_id", maxLength: 128)
  }
}

/// One file of the admin console, held in memory with the headers every answer carries.
struct ConsoleFile: Sendable {
  var name: String
  var contentType: String
  var body: [UInt8]
  /// A strong validator: the SHA-256 of the body.
  var etag: String

  /// The types a console file may have; any other file in the directory is not served.
  static let contentTypes: [String: String] = [
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
    "svg": "image/svg+xml",
  ]

  /// The policy of every console answer: scripts and styles from this origin only (never
  /// inline), calls to this origin only, never framed, no base or form target elsewhere.
  static let contentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    + "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
    + "form-action 'self'"

  /// Headers of every console answer, including 304s and redirects.
  static let securityHeaders: [(String, String)] = [
    ("Content-Security-Policy", contentSecurityPolicy),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    // Revalidated on every load (cheap: 304 by ETag), so a new release is never half-cached.
    ("Cache-Control", "no-cache"),
  ]
}

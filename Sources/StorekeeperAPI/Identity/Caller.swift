import StorekeeperCore

/// Who sent an app request, as its credentials prove.
package enum Caller: Sendable, Equatable {
  /// A signed-in end user (`APP_AUTH=jwt`): the token's `sub`.
  case user(String)
  /// The app's own backend (`APP_AUTH=api_key`), by its key's name: names any user.
  case backend(String)
  /// `APP_AUTH=none`: nothing was proven; trusted like a backend.
  case anyone
  /// No credentials, on a receipt post under `RECEIPTS_WITHOUT_SIGN_IN=true`: may make a
  /// userless post only, and names no user (`AppAuthenticator.user` refuses one).
  case anonymous

  /// The one user this caller may act for; nil when it may act for any user it names (or, for
  /// `anonymous`, for none: `AppAuthenticator.user` decides that before anything acts).
  var confinedTo: String? {
    if case .user(let id) = self { id } else { nil }
  }

  /// Byte for byte, as user ids are everywhere (`UserId.same`), not by the canonical
  /// equivalence a synthesised `==` would use.
  package static func == (lhs: Caller, rhs: Caller) -> Bool {
    switch (lhs, rhs) {
    case (.user(let a), .user(let b)), (.backend(let a), .backend(let b)): UserId.same(a, b)
    case (.anyone, .anyone), (.anonymous, .anonymous): true
    default: false
    }
  }
}

/// What an admin token may do: `read` may look (GET and HEAD), `write` may also change.
public enum AdminScope: String, Sendable, Equatable {
  case read
  case write

  /// Whether a token of this scope may do what needs `needed`; write implies read.
  public func allows(_ needed: AdminScope) -> Bool {
    self == .write || needed == .read
  }
}

/// The outcome of checking a proof of purchase.
///
/// Closed on purpose: callers must decide what to do with each case. `retryable` means the
/// proof could not be judged yet (Apple unreachable, transient error) and must not be treated
/// as a refusal.
public enum VerificationResult<Value: Sendable>: Sendable {
  case valid(Value)
  case invalid(String)
  case retryable(String)

  public var value: Value? {
    if case .valid(let value) = self { return value }
    return nil
  }

  /// The machine-readable reason of an `invalid` or `retryable` outcome.
  public var reason: String? {
    switch self {
    case .valid: nil
    case .invalid(let reason), .retryable(let reason): reason
    }
  }

  public func map<Other: Sendable>(_ transform: (Value) -> Other) -> VerificationResult<Other> {
    switch self {
    case .valid(let value): .valid(transform(value))
    case .invalid(let reason): .invalid(reason)
    case .retryable(let reason): .retryable(reason)
    }
  }
}

extension VerificationResult: Equatable where Value: Equatable {}

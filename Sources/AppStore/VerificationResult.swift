/// The outcome of checking a proof of purchase.
///
/// Closed on purpose: callers must decide what to do with each case. `retryable` means the
/// proof could not be judged yet (Apple unreachable, transient error) and must not be treated
/// as a refusal. `misconfigured` means it could not be judged because of this server's own
/// settings (a wrong shared secret, a URL that is not the endpoint it claims): like
/// `retryable` the proof waits, but the fault is the operator's to fix, not Apple's to pass.
public enum VerificationResult<Value: Sendable>: Sendable {
  case valid(Value)
  case invalid(String)
  case retryable(String)
  case misconfigured(Misconfiguration)

  public var value: Value? {
    if case .valid(let value) = self { return value }
    return nil
  }

  /// The machine-readable reason of any outcome but `valid`.
  public var reason: String? {
    switch self {
    case .valid: nil
    case .invalid(let reason), .retryable(let reason): reason
    case .misconfigured(let problem): problem.reason
    }
  }

  public func map<Other: Sendable>(_ transform: (Value) -> Other) -> VerificationResult<Other> {
    switch self {
    case .valid(let value): .valid(transform(value))
    case .invalid(let reason): .invalid(reason)
    case .retryable(let reason): .retryable(reason)
    case .misconfigured(let problem): .misconfigured(problem)
    }
  }
}

extension VerificationResult: Equatable where Value: Equatable {}

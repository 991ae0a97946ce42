/// Asking Google on a request path within the gate's Google lane. A request only tries a slot:
/// waiting would let a slow Google (or a flood of made-up tokens) hold requests without bound,
/// while past the cap the report waits as safely in the retry worker's hands.
extension GooglePurchaseVerifier {
  func verify(token: String, product: Product, triedAt gate: VerificationGate) async
    -> GoogleAnswer
  {
    if Task.isCancelled { return .clientGone }
    guard let verdict = await gate.ifFree(.google, { await verify(token: token, product: product) })
    else { return Task.isCancelled ? .clientGone : .busy }
    // A call cut short because the client left reads as Google unreachable; left pending, the
    // retry worker would ask Google again for nobody. What Google did answer is kept: the
    // call is paid for, and a purchase it confirms is the customer's whether they wait or not.
    if case .retryable = verdict, Task.isCancelled { return .clientGone }
    return .verdict(verdict)
  }
}

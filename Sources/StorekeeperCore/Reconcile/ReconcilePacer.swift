/// Spaces requests to Apple at most `ratePerSecond` apart, within one pass.
struct ReconcilePacer: Sendable {
  private let spacing: Duration
  private var last: ContinuousClock.Instant?

  init(ratePerSecond: Double) {
    spacing = .milliseconds(Int64((1000 / ratePerSecond).rounded(.up)))
  }

  mutating func wait() async {
    let clock = ContinuousClock()
    if let last {
      let next = last.advanced(by: spacing)
      if next > clock.now { try? await Task.sleep(until: next, clock: clock) }
    }
    last = clock.now
  }
}

/// What the retry worker does next with a stored Google report.
package enum GoogleRetry: Sendable, Equatable {
  /// Settled, applied or refused: the report has its outcome (`what` for the log).
  case done(String)
  /// Ask Google again later; `mayGiveUp` only for Google's outages (a pending purchase and
  /// this server's own misconfiguration wait as long as it takes).
  case wait(reason: String, mayGiveUp: Bool)
}

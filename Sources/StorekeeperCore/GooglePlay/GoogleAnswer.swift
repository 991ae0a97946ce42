/// What a request got when it asked Google about a purchase token
/// (`GooglePurchaseVerifier.verify(token:product:triedAt:)`).
enum GoogleAnswer: Sendable, Equatable {
  /// Google's verdict; also "not reached" for a client still waiting for its answer.
  case verdict(GoogleVerdict)
  /// Google's calls are at their cap (`GOOGLE_PLAY_CONCURRENCY`): Google was not asked, and the
  /// report is the retry worker's, as when Google is away.
  case busy
  /// Its client left before Google answered: nothing was learned, and nobody waits for it.
  case clientGone
}

import StorekeeperLogging

extension GoogleNotificationService {
  /// A subscription a restore or a repeated report just verified at Google, applied as a
  /// subscription notification is (renewals whose pushes were lost or are still queued, state,
  /// expiry), so the answer says what Google does. It never fails the caller: what is not
  /// applied here, the push or the sweep applies later.
  package func readBack(_ token: String) async {
    // Changed while Google was read (a push applied meanwhile): read again, a few times.
    for _ in 0..<3 {
      do {
        guard let purchase = try await known(token), purchase.kind == .subscription,
          !purchase.revoked
        else { return }
        switch try await subscriptionChanged(token, purchase) {
        case .done: return
        case .retry(let reason) where reason == Self.changedMeanwhile: continue
        case .retry(let reason):
          logger.warning(
            "Google subscription not read back for its restore", ["reason": .string(reason)])
          return
        }
      } catch {
        logger.warning(
          "Google subscription not read back for its restore", ["error": .string("\(error)")])
        return
      }
    }
  }
}

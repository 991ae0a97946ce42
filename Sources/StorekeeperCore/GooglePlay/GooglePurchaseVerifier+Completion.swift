import Foundation
import GooglePlay

/// When a one-time purchase became PURCHASED, which `purchases.products` does not say: its
/// `purchaseTimeMillis` is when the purchase began, days earlier for one paid in cash after it
/// was pending, while Google's three days to acknowledge start at its completion. Asked of
/// `productsv2` only when the purchase began more than a day ago (`alertAfterMs`), since only
/// then would the acknowledgement alert be wrong at once; a purchase credited sooner keeps its
/// purchase time (an alert at most a day early, never late). A failed read keeps it too.
extension GooglePurchaseVerifier {
  package func completion(
    _ verdict: GoogleVerdict, nowMs: Int64 = Int64(Date().timeIntervalSince1970 * 1000)
  ) async
    -> GoogleVerdict
  {
    guard case .purchased(var purchase) = verdict, purchase.kind == .product,
      purchase.purchaseTimeMs < nowMs - GoogleAcknowledgementQueue.alertAfterMs,
      let answer = try? await client.productPurchaseV2(token: purchase.token),
      let completed = answer.purchaseCompletionDate
    else { return verdict }
    let completedMs = Int64((completed.timeIntervalSince1970 * 1000).rounded())
    purchase.completedAtMs = max(purchase.purchaseTimeMs, completedMs)
    return .purchased(purchase)
  }
}

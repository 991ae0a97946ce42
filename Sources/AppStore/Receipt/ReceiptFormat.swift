/// Which of Apple's two receipt formats a verified receipt came in (see `ReceiptBody`).
public enum ReceiptFormat: String, Sendable, Codable, CaseIterable {
  /// The app receipt: `bundle_id`, `in_app[]`.
  case app
  /// The iOS 6-style transaction receipt: the transaction itself, the app in `bid`.
  case transaction
}

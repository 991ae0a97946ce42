/// `POST /fake/v1/restores`.
struct FakeRestoreRequest: Decodable, Sendable {
  /// The non-consumable purchase to restore (or a restore of it).
  var transactionId: String
  /// When the restore happens; default now.
  var purchaseDateMs: Int64?
}

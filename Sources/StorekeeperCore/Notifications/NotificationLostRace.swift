/// A notification's effect lost a race that its next pass resolves: the app posted the same
/// renewal meanwhile and its own order took the transaction. The notification's transaction
/// rolls back and it stays pending; on the next pass the transaction is known and owned, and
/// the notification only confirms its dates and state.
struct NotificationLostRace: Error, CustomStringConvertible {
  var transactionId: String

  var description: String { "transaction \(transactionId) was settled by another request" }
}

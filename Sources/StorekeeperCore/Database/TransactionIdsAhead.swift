/// The database holds transaction ids (`xid8`) at or past its cluster's next one: what a
/// logical restore (`pg_dump`, `pg_restore` into another cluster) leaves, since the dump copies
/// the values but not the counter of the cluster that wrote them. Served so, the event feed
/// hides every event above the counter and strands consumers' cursors, and chart passes miss
/// the rows written meanwhile. A refusal at start-up (exit 2, as a configuration error: starting
/// again changes nothing until an operator moves the counter).
package struct TransactionIdsAhead: Error, CustomStringConvertible, Sendable {
  /// The places holding values ahead, each with the highest one there.
  package var ahead: [(place: String, highest: String)]
  /// `pg_snapshot_xmax(pg_current_snapshot())`: the cluster's next transaction id.
  package var next: String

  /// Where INSTALL.md says what to do.
  package static let guide =
    "docs/INSTALL.md, section 8, \"Restoring a dump into another cluster\""

  package var description: String {
    let places = ahead.map { "\($0.place) up to \($0.highest)" }.joined(separator: ", ")
    return "the database holds transaction ids ahead of its cluster's next one (\(places); next "
      + "transaction id \(next)): it was restored from a dump into another cluster, whose "
      + "counter is lower, and served so the event feed would hide events and strand cursors "
      + "and chart passes would miss rows. With the cluster stopped, move its counter past "
      + "\(ahead.first?.highest ?? next) (pg_resetwal), start Storekeeper, then run "
      + "storekeeper charts-backfill: \(Self.guide)"
  }
}

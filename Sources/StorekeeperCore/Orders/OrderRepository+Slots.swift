import Postgres

extension OrderRepository {
  /// A subquery of the user's first `count` free open-order slots, ascending (column `slot`),
  /// found from the slots the user's open orders hold rather than by trying every number up to
  /// `maxOpen`: its cost follows the user's open orders (at most `maxOpen`, and none for most
  /// users), not the limit.
  ///
  /// The taken slots come in order from `orders_open_slot` (`user_id`, `open_slot_key`; closed
  /// orders' keys are NULL and are not read). Each taken slot, and a 0 before the first, opens a
  /// run of free slots up to the next taken one (or `maxOpen`); the runs give their first slots,
  /// lazily (a set-returning function in a select list stops at its `LIMIT`). A run ends
  /// where, filled, it would take the user past `maxOpen` with the slots held above it: after
  /// the i-th held slot of n, at `maxOpen - (n - i)`. With every slot at or under the limit
  /// that bound is never the one that stops a run; with slots held above a limit since lowered
  /// (and those held under them), it keeps the free slots few enough that the unique index
  /// alone keeps the user at the limit. A count read from the snapshot did not: two creations
  /// that both saw one slot left took two different ones.
  ///
  /// Empty exactly when, in the statement's snapshot, every slot of 1...maxOpen is taken or
  /// the user holds `maxOpen` slotted open orders (some above a limit since lowered): the one
  /// condition for refusing an order.
  ///
  /// `user` and `count` are SQL expressions: a bound user id and a constant for one order, the
  /// columns of the item's row for a batch. `earlier`: how many orders of the same user come
  /// before this one in its statement (a batch's rank): none is found once they would take the
  /// user to `maxOpen`, which the free slots below the limit do not show when the user holds
  /// slots above a limit since lowered.
  static func freeSlots(
    user: PostgresQuery, maxOpen: Int, count: PostgresQuery, earlier: PostgresQuery = "0"
  ) -> PostgresQuery {
    let limit = max(0, maxOpen)
    return """
      SELECT f.n::smallint AS slot FROM (
        SELECT t.k + 1 AS lo,
          least(lead(t.k::int, 1, \(limit)::int + 1) OVER (ORDER BY t.k) - 1,
                \(limit)::int - (count(*) OVER () - row_number() OVER (ORDER BY t.k))::int) AS hi,
          count(*) OVER () - 1 AS held
        FROM (
          SELECT 0::smallint AS k
          UNION ALL
          SELECT x.open_slot_key FROM orders x
          WHERE x.user_id = \(user) AND x.open_slot_key IS NOT NULL
        ) t
      ) g CROSS JOIN LATERAL (SELECT generate_series(g.lo, g.hi) AS n LIMIT \(count)) f
      WHERE g.lo <= g.hi AND g.held + \(earlier) < \(limit)
      ORDER BY f.n LIMIT \(count)
      """
  }
}

import Postgres

extension OrderRepository {
  /// The events of one user's changed orders, as the JSON array `storekeeper_append_events`
  /// takes, aggregated over `changed c` grouped by user: `extra` first, then one order event per
  /// order (nil: none), in trade number order.
  static func eventsJSON(
    _ extra: [EventDraft], _ orderEvent: EventType?, transition: OrderTransition,
    cause: OrderEventCause
  ) throws -> PostgresQuery {
    var query: PostgresQuery = "\(EventDraft.json(extra))::jsonb"
    guard let orderEvent else { return query }
    query.append(
      """
       || jsonb_agg(jsonb_build_object('type', \(orderEvent)::text, 'data', jsonb_strip_nulls(
           jsonb_build_object(
             'trade_no', c.trade_no, 'product_id', c.product_id, 'quantity', c.quantity,
             'amount', c.amount::text, 'currency', c.currency, 'trade_status', c.trade_status,
             'previous_status', \(transition.from)::text, 'close_reason', c.close_reason,
             'reason', \(transition.reason)::text, 'cause', \(cause)::text,
             'transaction_id', c.transaction_id, 'environment', c.environment, 'origin', c.origin,
             'store', c.store)))
         ORDER BY c.trade_no)
      """)
    return query
  }
}

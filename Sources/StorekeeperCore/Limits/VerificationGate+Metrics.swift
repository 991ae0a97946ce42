/// The gate's lanes for `/metrics`: how full they are now, and what the queue did since start,
/// so an operator sees a burst waiting (or refused) before clients complain.
extension VerificationGate {
  package var lines: [String] {
    let lanes: [(String, Lane)] = [("cpu", .cpu), ("apple", .apple), ("google", .google)]
    let counts = lanes.map { ($0.0, self.counts($0.1)) }
    func family(_ name: String, _ type: String, _ help: String, _ value: (Lane, Counts) -> Int)
      -> [String]
    {
      ["# HELP \(name) \(help)", "# TYPE \(name) \(type)"]
        + zip(lanes, counts).map { lane, count in
          "\(name){lane=\"\(lane.0)\"} \(value(lane.1, count.1))"
        }
    }
    return family(
      "storekeeper_verification_in_use", "gauge",
      "Verification slots held now (cpu: signature checks; apple: calls to Apple; "
        + "google: calls to Google Play's Developer API).",
      { lane, _ in inUse(lane) })
      + family(
        "storekeeper_verification_waiting", "gauge",
        "Requests and background work waiting for a verification slot now.",
        { lane, _ in waiting(lane) })
      + family(
        "storekeeper_verification_waiting_peak", "gauge",
        "The most that waited for a verification slot at once since start.",
        { _, count in count.peakWaiting })
      + family(
        "storekeeper_verification_admitted_after_waiting_total", "counter",
        "Requests that waited in the queue for their slot and got it.",
        { _, count in count.admittedAfterWaiting })
      + family(
        "storekeeper_verification_refused_total", "counter",
        "Requests refused a slot: the queue was full, or they waited VERIFY_QUEUE_TIMEOUT "
          + "(or their task was cancelled). cpu: answered 503 verification_busy; apple "
          + "(userless receipts): 503 when full, 202 pending after the wait.",
        { _, count in count.refusedFull + count.refusedWaiting })
  }
}

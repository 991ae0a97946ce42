/// The webhook dispatcher on its loop; on shutdown it also waits for the attempts in flight,
/// so each is recorded.
struct WebhookService: Service {
  let loop: BackgroundLoop
  let dispatcher: WebhookDispatcher

  var name: String { loop.name }

  func run() async {
    await loop.run()
    await dispatcher.drain()
  }
}

// One KafkaJS admin call against a Kafka listener, for tests/integration/kafkajs.py:
//   node admin.js HOST:PORT METHOD 'JSON ARGUMENTS'
// prints one JSON line: {"result": ..., "requests": [[api name, key, version], ...]}, or
// {"error": {"name", "type", "code", "message"}, "requests": [...]} (exit 0 either way; exit 2
// on bad usage). "requests" lists every request KafkaJS sent, read from its debug log.
'use strict'

const { Kafka, logLevel } = require('kafkajs')

const [address, method, json] = process.argv.slice(2)
if (!address || !method) {
  process.stderr.write('usage: node admin.js HOST:PORT METHOD [JSON ARGUMENTS]\n')
  process.exit(2)
}
const args = json ? JSON.parse(json) : undefined
const requests = []
const logCreator = () => ({ log }) => {
  const sent = /^Request (\w+)\(key: (\d+), version: (\d+)\)$/.exec(log.message)
  if (sent) requests.push([sent[1], Number(sent[2]), Number(sent[3])])
}

async function main() {
  const kafka = new Kafka({
    clientId: 'reassignd-kafkajs-test',
    brokers: [address],
    logLevel: logLevel.DEBUG,
    logCreator,
    retry: { retries: 2 },
    requestTimeout: 20000,
  })
  const admin = kafka.admin()
  await admin.connect()
  try {
    const result = await admin[method](args)
    return { result: result === undefined ? null : result, requests }
  } catch (e) {
    return {
      error: { name: e.name, type: e.type || null, code: e.code ?? null, message: e.message },
      requests,
    }
  } finally {
    await admin.disconnect()
  }
}

main().then(
  out => process.stdout.write(JSON.stringify(out) + '\n'),
  e => {
    process.stdout.write(JSON.stringify({ error: { name: e.name, message: e.message }, requests }) + '\n')
  }
)

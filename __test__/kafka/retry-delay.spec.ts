/**
 * lib/kafka/client.js `retryDelay`, the back-off of the cycle's producer, against the errors
 * `@platformatic/kafka` itself builds: CONCURRENT_TRANSACTIONS (the next transaction's
 * AddPartitionsToTxn while the broker still writes the previous commit's markers) is retried
 * after 20 ms, doubling, and still waits long enough over the client's 5 retries; every other
 * error keeps the 200 ms back-off.
 */
import { describe, expect, it } from 'vitest'
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { retryDelay } = require('../../lib/kafka/client')
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ResponseError, ProtocolError, NetworkError } = require('@platformatic/kafka')

/** An AddPartitionsToTxn answer with error `code` (51: CONCURRENT_TRANSACTIONS), as the client builds it. */
const answer = (code: number) => new ResponseError(24, 4, { '/results_by_transaction/0': [code, null] }, {})

describe('retryDelay', () => {
  it('CONCURRENT_TRANSACTIONS: 20 ms, doubling, over half a second in all', () => {
    const err = answer(51)
    expect(err.findBy('apiId', 'CONCURRENT_TRANSACTIONS')).toBeTruthy()
    const delays = [1, 2, 3, 4, 5].map((a) => retryDelay(null, 'addPartitionsToTransaction', a, 5, err))
    expect(delays).toEqual([20, 40, 80, 160, 320])
    expect(retryDelay(null, 'addPartitionsToTransaction', 1, 5, new ProtocolError('CONCURRENT_TRANSACTIONS'))).toBe(20)
  })

  it('every other error: 200 ms', () => {
    expect(retryDelay(null, 'produce', 1, 5, answer(6))).toBe(200) // NOT_LEADER_OR_FOLLOWER
    expect(retryDelay(null, 'produce', 3, 5, new NetworkError('socket closed'))).toBe(200)
    expect(retryDelay(null, 'produce', 1, 5, undefined)).toBe(200)
  })
})

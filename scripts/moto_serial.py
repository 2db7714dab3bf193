#!/usr/bin/env python3
"""moto_server with every request handled one at a time.

moto checks S3's If-Match / If-None-Match and stores the object in two steps
with no lock between them, while moto_server serves each request on its own
thread, so two conditional writes can both win (moto 5.2.1:
moto/s3/responses.py put_object checks, moto/s3/models.py put_object stores).
Real S3 and LocalStack make conditional writes atomic, and skilldrop's
catalog relies on it. This launcher keeps moto's threaded server (so idle
keep-alive connections never block anyone) but runs the application under
one lock, which makes every request atomic.

One request is left out of the lock: an SQS ReceiveMessage, which may
long-poll (WaitTimeSeconds) for up to 20 seconds. Under the lock it would
stall every other request, S3 included, for as long, which no AWS service
does; moto's SQS waits for messages under a lock of its own.

Three of moto's costs are taken out, without changing an answer (moto 5.2.1).
Every request looks up its backend by host, and for a host such as
127.0.0.1:4566 that scans moto's package directory (a listdir and a stat per
module, about 180) twice (moto/moto_server/werkzeug_app.py,
get_backend_for_host): 40% of the emulator's time in a burst, by cProfile.
The list cannot change while the process runs; it is read once. Its SQS
reads the clock through datetime arithmetic, several microseconds a call,
and calls it for every message of a queue whenever it computes the queue's
attributes, which it does for each message a ReceiveMessage looks at (to
read one number, the retention period) and for each message sent (to read
ContentBasedDeduplication) (moto/sqs/models.py). With 200 messages queued, a
receive took 150 ms and each S3 upload's notification 7 ms of the one Python
interpreter every S3 request needs too, where SQS answers in milliseconds at
any depth. The patches read the clock from time.time() (the same number) and
the retention period from the queue. A burst benchmark measured mostly these
costs before.

Usage: moto_serial.py [-H HOST] [-p PORT]
"""
import argparse
import os
import signal
import sys
import threading


def modules_listed_once() -> None:
    """Makes moto's list of its modules (a directory scan) a constant."""
    from moto import backends

    if not hasattr(backends, "list_of_moto_modules"):
        return  # another moto: nothing to patch
    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules


def cheaper_sqs() -> None:
    """Makes moto's SQS read the clock with time.time() and its retention
    check read the queue's retention period directly: the values moto
    computes, at a fraction of the cost."""
    import time

    from moto.core import utils
    from moto.sqs import models

    def unix_time(dt=None):
        return time.time() if dt is None else utils.unix_time(dt)

    def unix_time_millis(dt=None):
        return unix_time(dt) * 1000.0

    if hasattr(models, "unix_time") and hasattr(models, "unix_time_millis"):
        models.unix_time, models.unix_time_millis = unix_time, unix_time_millis

    if hasattr(models.SQSBackend, "is_message_valid_based_on_retention_period"):

        def is_message_valid_based_on_retention_period(self, queue_name, message):
            retention = int(self.get_queue(queue_name).message_retention_period)
            return retention + message.sent_timestamp / 1000 > unix_time()

        models.SQSBackend.is_message_valid_based_on_retention_period = is_message_valid_based_on_retention_period


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=4566)
    args = parser.parse_args()
    # moto builds some URLs (SQS queue URLs) from MOTO_PORT.
    os.environ.setdefault("MOTO_PORT", str(args.port))

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import run_simple

    modules_listed_once()
    cheaper_sqs()
    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def handle(environ, start_response):
        body = app(environ, start_response)
        try:
            return [b"".join(body)]
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()

    def serialized(environ, start_response):
        if environ.get("HTTP_X_AMZ_TARGET") == "AmazonSQS.ReceiveMessage":
            return handle(environ, start_response)
        with lock:
            return handle(environ, start_response)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    run_simple(args.host, args.port, serialized, threaded=True)


if __name__ == "__main__":
    main()

"""The gRPC layer of the service.

The contract is `proto/sniff/v1/sniff.proto`; its Python code is generated into
`service.rpc.gen` by `scripts/gen_proto.py` (never edit it by hand):

    from service.rpc.gen.sniff.v1 import sniff_pb2, sniff_pb2_grpc
"""

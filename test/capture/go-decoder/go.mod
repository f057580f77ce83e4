module godecoder

go 1.19

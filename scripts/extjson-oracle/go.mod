module github.com/bson2json/extjson-oracle

go 1.22

require go.mongodb.org/mongo-driver/v2 v2.7.0

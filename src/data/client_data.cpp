#include <cflrun/data/client_data.hpp>

#include <utility>

namespace cflrun::data {

ClientData partitioned_client_data(std::shared_ptr<const ImageDataset> dataset,
                                   Partition partition) {
  ClientData data;
  data.sample_shape = dataset->train.images.sizes().slice(1).vec();
  data.num_classes = dataset->num_classes;
  data.true_clusters = partition.true_clusters();
  auto shards = std::make_shared<const std::vector<ClientShard>>(std::move(partition.clients));
  data.samples = [dataset, shards](int client, bool train) {
    return client_samples(*dataset, shards->at(static_cast<std::size_t>(client)), train);
  };
  return data;
}

}  // namespace cflrun::data
